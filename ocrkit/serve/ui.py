"""The web page of `ocrkit serve` at `/`: upload a page, see the detected boxes over it and the text
beside them. Plain HTML, CSS and JavaScript shipped in ocrkit/serve/static/ (no build step, nothing
fetched from elsewhere); the page calls the same /v1 endpoints as any client."""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ocrkit import __version__

STATIC = Path(__file__).parent / "static"


def add_ui(app: FastAPI) -> None:
    """`GET /` answers the page, `/ui/…` its script and style sheet."""
    template = (STATIC / "index.html").read_text(encoding="utf-8")

    @app.get("/", include_in_schema=False)
    async def index(request: Request) -> HTMLResponse:
        # The page's links are relative to <base>: behind a proxy that serves the service under a
        # prefix (uvicorn's root_path, `ocrkit serve --root-path`) they stay under that prefix.
        root = html.escape(request.scope.get("root_path", "").rstrip("/") + "/", quote=True)
        page = template.replace("{{ROOT}}", root).replace("{{VERSION}}", __version__)
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    app.mount("/ui", StaticFiles(directory=STATIC), name="ui")
