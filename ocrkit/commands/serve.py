"""`ocrkit serve`: the OCR models behind an HTTP API (needs the `serve` extra: FastAPI + uvicorn)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ocrkit.decode.ctc import DECODINGS
from ocrkit.errors import OcrkitError
from ocrkit.extras import require
from ocrkit.io import MAX_PIXELS

if TYPE_CHECKING:
    from fastapi import FastAPI


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve OCR over HTTP (POST /v1/ocr; needs pip install 'ocrkit[serve]')")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: localhost only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", choices=("onnx", "torch"), default="onnx")
    p.add_argument("--det-model", type=Path, help="detector folder or shipped name (default: detector)")
    p.add_argument("--rec-model", type=Path, help="recognizer folder or shipped name (default: recognizer)")
    p.add_argument("--decoding", choices=DECODINGS, help="override the recognizer's own decoder")
    p.add_argument("--workers", type=int, default=1, help="requests read at once, sharing one model copy")
    p.add_argument("--queue", type=int, default=8, help="requests that may wait; more get 503 (default 8)")
    p.add_argument("--threads", type=int, help="CPU threads per request (default: library default)")
    p.add_argument("--batch-size", type=int, default=16, help="line crops per recognizer batch")
    p.add_argument("--max-upload-mb", type=float, default=20, help="largest upload accepted (default 20)")
    p.add_argument("--max-pixels", type=int, default=MAX_PIXELS, help=f"largest page (default {MAX_PIXELS})")
    p.add_argument("--max-pages", type=int, default=20, help="most PDF pages per request (default 20)")
    p.add_argument("--no-ui", dest="ui", action="store_false", help="no web page at / (the API only)")
    p.add_argument(
        "--root-path", default="", help="URL prefix a reverse proxy serves the service under, e.g. /ocr"
    )
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=run)


def build_app(args: argparse.Namespace) -> FastAPI:
    """Load the models once and wrap them in the service."""
    from ocrkit import zoo
    from ocrkit.pipeline import OCR
    from ocrkit.serve.app import create_app, describe_models
    from ocrkit.serve.uploads import Limits

    if args.workers < 1 or args.queue < 0:
        raise OcrkitError("--workers must be at least 1 and --queue at least 0")
    ocr = OCR(
        args.det_model,
        args.rec_model,
        backend=args.backend,
        batch_size=args.batch_size,
        threads=args.threads,
        decoding=args.decoding,
    )
    models = describe_models(
        zoo.resolve(args.det_model, "detector"), zoo.resolve(args.rec_model, "recognizer"), args.backend
    )
    limits = Limits(int(args.max_upload_mb * 1024 * 1024), args.max_pixels, args.max_pages)
    return create_app(ocr, models, limits, workers=args.workers, queue=args.queue, ui=args.ui)


def run(args: argparse.Namespace) -> int:
    for module in ("fastapi", "uvicorn", "multipart", "fastapi_offline"):
        require(module, "serve", "ocrkit serve")
    import uvicorn

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s:     %(name)s: %(message)s")
    app = build_app(args)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, root_path=args.root_path)
    return 0
