"""Datasets: synthetic generation, COCO detection pages, line manifests."""
