"""`ocrkit serve`: the OCR models behind an HTTP API (needs the `serve` extra: FastAPI + uvicorn)."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from ocrkit.commands.options import (
    add_model_options,
    int_range,
    non_negative_int,
    positive_float,
    positive_int,
)
from ocrkit.images.io import MAX_PIXELS
from ocrkit.util.extras import require

if TYPE_CHECKING:
    from fastapi import FastAPI


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve OCR over HTTP (POST /v1/ocr; needs pip install 'ocrkit[serve]')")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1: this machine only)")
    p.add_argument("--port", type=int_range(0, 65535), default=8000, help="TCP port to listen on")
    p.add_argument(
        "--workers", type=positive_int, default=1, help="requests read at once, sharing one model copy"
    )
    p.add_argument("--queue", type=non_negative_int, default=8, help="requests that may wait; more get 503")
    p.add_argument("--max-upload-mb", type=positive_float, default=20, help="largest upload accepted, in MB")
    p.add_argument("--max-pixels", type=positive_int, default=MAX_PIXELS, help="largest page, in pixels")
    p.add_argument("--max-pages", type=positive_int, default=20, help="most PDF/TIFF pages read per request")
    p.add_argument(
        "--max-connections", type=positive_int, default=64, help="open connections at once; more get 503"
    )
    p.add_argument(
        "--log-level", default="info", choices=("debug", "info", "warning", "error"), help="server log detail"
    )
    p.add_argument("--no-ui", dest="ui", action="store_false", help="no web page at / (the API only)")
    p.add_argument(
        "--root-path", default="", help="URL prefix a reverse proxy serves the service under, e.g. /ocr"
    )
    add_model_options(p)
    p.set_defaults(func=run)


def build_app(args: argparse.Namespace) -> FastAPI:
    """Load the models once and wrap them in the service."""
    from ocrkit.commands.common import load_ocr
    from ocrkit.hub import zoo
    from ocrkit.serve.app import create_app, describe_models
    from ocrkit.serve.uploads import Limits

    ocr = load_ocr(args)
    models = describe_models(
        zoo.resolve(args.det_model, "detector"),
        zoo.resolve(args.rec_model, "recognizer"),
        ocr.backend,
        ocr.min_confidence,
    )
    limits = Limits(int(args.max_upload_mb * 1024 * 1024), args.max_pixels, args.max_pages)
    return create_app(ocr, models, limits, workers=args.workers, queue=args.queue, ui=args.ui)


def run(args: argparse.Namespace) -> int:
    for module in ("fastapi", "uvicorn", "multipart", "fastapi_offline"):
        require(module, "serve", "ocrkit serve")
    import uvicorn

    from ocrkit.serve.server import server_settings

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s:     %(name)s: %(message)s")
    app = build_app(args)
    settings = server_settings(args.max_connections)
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, root_path=args.root_path, **settings
    )
    return 0
