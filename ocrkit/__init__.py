"""ocrkit"""
