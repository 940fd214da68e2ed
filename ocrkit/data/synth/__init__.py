"""Synthetic training data: realistic pages with tight per-line boxes, and detector-like line crops."""

from ocrkit.data.synth.generate import generate_lines, generate_pages

__all__ = ["generate_lines", "generate_pages"]
