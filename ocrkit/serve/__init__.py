"""`ocrkit serve`: OCR over HTTP (FastAPI + uvicorn, the `serve` install extra).

Nothing is imported here, so `ocrkit` works without the extra; ocrkit.commands.serve checks for it.
"""
