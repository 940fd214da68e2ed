"""The FastAPI application of `ocrkit serve`: upload → pages → the formats `ocrkit infer` writes.

Thin on purpose: decoding and its checks are ocrkit.images.io's (through uploads.py), reading is the OCR
pipeline's, the output formats are ocrkit.pages.formats'. What is the service's own: limits, the bounded pool,
and turning every refusal into a JSON error `{"error", "detail"}` with a fitting status.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Literal

from fastapi import FastAPI, File, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from ocrkit import __version__
from ocrkit.pages import formats
from ocrkit.pages.document import Page
from ocrkit.serve.body_limit import BodyLimit
from ocrkit.serve.convert import body_schema, parse_pages
from ocrkit.serve.pool import Busy, RequestPool
from ocrkit.serve.preview import page_image
from ocrkit.serve.schemas import ERRORS, Health, ModelsAnswer
from ocrkit.serve.ui import add_ui
from ocrkit.serve.uploads import (
    Limits,
    PageReader,
    Upload,
    UploadError,
    check_media_type,
    read_upload,
    read_upload_pdf,
)

log = logging.getLogger("ocrkit.serve")

MEDIA_TYPES = {
    "json": "application/json",
    "txt": "text/plain; charset=utf-8",
    "hocr": "text/html; charset=utf-8",
    "alto": "application/xml; charset=utf-8",
    "page": "application/xml; charset=utf-8",
    "pdf": "application/pdf",
}
Format = Literal["json", "txt", "hocr", "alto", "page", "pdf"]
BODY_SLACK = 64 * 1024  # multipart boundaries and headers around the file


def describe_models(det_dir: Path, rec_dir: Path, backend: str, min_confidence: float) -> dict:
    """What /v1/models reports of the models (ModelsAnswer but its limits): the folders' names and
    releases, a hash of their weights as the version (the same digest the ONNX cache uses), and the
    settings that change results."""
    from ocrkit.hub.model_folder import read_spec, settings_of
    from ocrkit.hub.model_info import release_name
    from ocrkit.hub.zoo import weights_digest

    def one(path: Path) -> dict:
        settings = settings_of(read_spec(path))
        keep = ("task", "arch", "size", "longest", "decoding", "score_threshold")
        chosen = {k: settings[k] for k in keep if k in settings}
        return {"name": path.name, "release": release_name(path), "version": weights_digest(path), **chosen}

    return {
        "ocrkit": __version__,
        "backend": backend,
        "detector": one(det_dir),
        "recognizer": one(rec_dir),
        "min_confidence": min_confidence,
    }


def answer_content() -> dict:
    """The 200 answer of /v1/ocr and /v1/convert per media type: JSON typed as the pages' schema."""
    content: dict[str, dict] = {t.split(";")[0]: {} for t in MEDIA_TYPES.values()}
    content["application/json"] = {"schema": body_schema()}
    return content


def error(status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": code, "detail": detail}, status_code=status, headers=headers)


def busy(exc: Busy) -> JSONResponse:
    return error(503, "busy", "all workers are busy; retry later", {"Retry-After": str(exc.retry_after)})


def invalid(errors: list, where: tuple[str, ...] = ()) -> JSONResponse:
    """422 for a request that does not validate, each problem as `location: message`."""
    detail = "; ".join(f"{'.'.join(map(str, (*where, *e['loc'])))}: {e['msg']}" for e in errors)
    return error(422, "invalid_request", detail)


def convert_body(body: bytes, fmt: str) -> Response:
    """/v1/convert's work, parsing included: it runs in the pool, as readings do."""
    return respond(parse_pages(body), fmt)


def respond(pages: list[Page], fmt: str) -> Response:
    """JSON: {"pages": [...]}, each page exactly as `ocrkit infer --format json` writes it; txt: the pages'
    text separated by form feeds; hOCR / ALTO / PAGE-XML hold one page (a PDF page chosen by page=N); a
    searchable PDF needs the page pictures, which only /v1/ocr has."""
    if fmt == "pdf":
        detail = "a searchable PDF holds the page pictures: ask /v1/ocr?format=pdf with the file"
        return error(422, "pdf_needs_the_file", detail)
    if fmt == "json":
        body = json.dumps({"pages": [p.to_dict() for p in pages]}, ensure_ascii=False)
    elif fmt == "txt":
        body = "\f".join(formats.render(p, "txt") for p in pages)
    elif len(pages) != 1:
        detail = f"{fmt} holds one page and the PDF has {len(pages)}: pass page=N"
        return error(422, "one_page_format", detail)
    else:
        body = formats.render(pages[0], fmt)
    return Response(body, media_type=MEDIA_TYPES[fmt])


def create_app(
    ocr: PageReader, models: dict, limits: Limits, workers: int = 1, queue: int = 8, ui: bool = True
) -> FastAPI:
    """The service around one loaded OCR: `workers` requests are read at once by that same model copy,
    `queue` more wait, further ones get 503 with Retry-After. `ui` adds the web page at `/`; the API
    docs (/docs, /redoc) load their scripts from this service, so they work with no internet."""
    pool = RequestPool(workers, queue)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        pool.shutdown()

    app = FastAPIOffline(
        title="ocrkit", version=__version__, lifespan=lifespan, summary="Document OCR over HTTP"
    )

    @app.middleware("http")
    async def request_id(request: Request, call_next: Callable[[Request], Awaitable[Response]]):
        request.state.request_id = uuid.uuid4().hex[:16]
        response = await call_next(request)
        response.headers["X-Request-ID"] = request.state.request_id
        return response

    def too_large() -> Response:
        detail = f"the upload is larger than {limits.max_upload_bytes} bytes"
        return error(413, "too_large", detail, {"X-Request-ID": uuid.uuid4().hex[:16]})

    # added last, so it is the outermost layer: bodies are counted before anything else reads them
    app.add_middleware(BodyLimit, max_bytes=limits.max_upload_bytes + BODY_SLACK, too_large=too_large)

    _add_error_handlers(app)
    _add_info_routes(app, pool, models, limits)
    _add_page_routes(app, ocr, pool, limits)
    _add_convert_route(app, pool)
    if ui:
        add_ui(app)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    """Every refusal and failure as the JSON error body (ErrorAnswer)."""

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return invalid(list(exc.errors()))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return _internal(request, exc)


def _add_info_routes(app: FastAPI, pool: RequestPool, models: dict, limits: Limits) -> None:
    """What the service is: alive, and which models with which limits."""

    @app.get("/healthz", summary="Liveness: the models are loaded and requests are accepted")
    async def healthz() -> Health:
        return Health(status="ok", models_loaded=True, in_flight=pool.admitted, capacity=pool.capacity)

    @app.get("/v1/models", summary="The loaded models, their versions and settings, and the limits")
    async def list_models() -> ModelsAnswer:
        return ModelsAnswer.model_validate(models | {"limits": asdict(limits)})


def _add_page_routes(app: FastAPI, ocr: PageReader, pool: RequestPool, limits: Limits) -> None:
    """Reading an upload, and the page as a picture to draw its boxes over; both in the bounded pool."""

    @app.post(
        "/v1/ocr",
        summary="Read an image or a PDF",
        responses={
            200: {"content": answer_content(), "description": "the pages, in the format asked"},
            **ERRORS,
        },
    )
    async def read(
        request: Request,
        file: Annotated[UploadFile, File(description="an image (PNG, JPEG, TIFF, …) or a PDF")],
        fmt: Annotated[
            Format, Query(alias="format", description="json | txt | hocr | alto | page | pdf (searchable)")
        ] = "json",
        page: Annotated[int | None, Query(ge=1, description="read only this page of a PDF")] = None,
        min_confidence: Annotated[
            float | None,
            Query(
                ge=0.0,
                lt=1.0,
                description="drop lines read less sure than this; 0 keeps every line read as text "
                "(default: the service's, see /v1/models)",
            ),
        ] = None,
    ) -> Response:
        try:
            check_media_type(file.content_type)
            data = await file.read(limits.max_upload_bytes + 1)
            reader = read_upload_pdf if fmt == "pdf" else read_upload
            upload = Upload(data, file.filename or "upload", limits, page, min_confidence)
            result = await pool.run(reader, ocr, upload)
        except Busy as exc:
            log.warning("busy: refused a request (%d in the pool)", pool.admitted)
            return busy(exc)
        except UploadError as exc:
            log.info("refused %r: %s (%s)", file.filename, exc.error, exc.detail)
            return error(exc.status, exc.error, exc.detail)
        except Exception as exc:  # noqa: BLE001 - any bug becomes a logged 500, the server keeps serving
            return _internal(request, exc)
        if fmt == "pdf":
            return Response(result, media_type=MEDIA_TYPES["pdf"])
        return respond(result, fmt)

    @app.post(
        "/v1/page-image",
        summary="An uploaded page as a JPEG, decoded as /v1/ocr decodes it (to draw its boxes over)",
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}, "description": "the page as a JPEG"}, **ERRORS},
    )
    async def picture(
        request: Request,
        file: Annotated[UploadFile, File(description="an image (PNG, JPEG, TIFF, …) or a PDF")],
        page: Annotated[int, Query(ge=1, description="the page of a PDF or TIFF")] = 1,
    ) -> Response:
        """At most 2400 px on its longest side; X-Page-Width and X-Page-Height give the page's size in the
        pixels of /v1/ocr's boxes, X-Page-Count the pages in the file. Refused as /v1/ocr refuses."""
        try:
            check_media_type(file.content_type)
            data = await file.read(limits.max_upload_bytes + 1)
            shown = await pool.run(page_image, data, limits, page)
        except Busy as exc:
            return busy(exc)
        except UploadError as exc:
            return error(exc.status, exc.error, exc.detail)
        except Exception as exc:  # noqa: BLE001 - as for /v1/ocr: a logged 500, the server keeps serving
            return _internal(request, exc)
        sizes = {"X-Page-Width": shown.width, "X-Page-Height": shown.height, "X-Page-Count": shown.pages}
        return Response(shown.jpeg, media_type="image/jpeg", headers={k: str(v) for k, v in sizes.items()})


def _add_convert_route(app: FastAPI, pool: RequestPool) -> None:
    """Pages already read, written again in another format."""

    @app.post(
        "/v1/convert",
        summary="Write pages that /v1/ocr returned as JSON in another format, without reading them again",
        responses={
            200: {"content": answer_content(), "description": "the pages in the format asked"},
            **ERRORS,
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "description": "the JSON answer of /v1/ocr",
                "content": {"application/json": {"schema": body_schema()}},
            }
        },
    )
    async def convert(
        request: Request,
        fmt: Annotated[Format, Query(alias="format", description="json | txt | hocr | alto | page")] = "json",
    ) -> Response:
        """Parsed and written in the pool, like a reading: a large body then neither holds the event loop
        (and /healthz with it) nor escapes the worker and queue limits."""
        if "json" not in request.headers.get("content-type", ""):
            return error(422, "invalid_request", "body: send the pages as application/json")
        body = await request.body()
        try:
            return await pool.run(convert_body, body, fmt)
        except Busy as exc:
            return busy(exc)
        except ValidationError as exc:
            return invalid(exc.errors(include_url=False, include_input=False), ("body",))
        except Exception as exc:  # noqa: BLE001 - as for /v1/ocr: a logged 500, the server keeps serving
            return _internal(request, exc)


def _internal(request: Request, exc: Exception) -> JSONResponse:
    rid = getattr(request.state, "request_id", None) or uuid.uuid4().hex[:16]
    log.error("request %s failed", rid, exc_info=exc)
    body = {"error": "internal_error", "detail": f"internal error; request id {rid}", "request_id": rid}
    return JSONResponse(body, status_code=500, headers={"X-Request-ID": rid})
