"""Page orientation: which quarter turn puts a page upright, from a small CNN over windows of its print."""
