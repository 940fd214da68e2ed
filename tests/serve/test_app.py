"""`ocrkit serve` over real HTTP on 127.0.0.1: formats, every refused input, concurrency, the queue limit,
internal errors and memory. Tiny random models unless the test compares text with `ocrkit infer`."""

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import psutil
import pytest
import uvicorn
from fixtures import SAMPLES, free_port
from PIL import Image

from ocrkit.cli import build_parser, main
from ocrkit.pages.document import Page
from ocrkit.serve.app import create_app
from ocrkit.serve.uploads import Limits

SAMPLE = SAMPLES / "synthetic_receipt.jpg"


def png(w: int = 260, h: int = 180, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 240, np.uint8)
    for r in range(min(4, (h - 20) // 35)):
        img[20 + 35 * r : 36 + 35 * r, 20 : 20 + int(rng.integers(w // 4, w - 30))] = 30
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def pdf(pages: int) -> bytes:
    images = [Image.fromarray(np.full((150, 200, 3), 200 + i, np.uint8)) for i in range(pages)]
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", save_all=True, append_images=images[1:], resolution=72)
    return buf.getvalue()


def post(url: str, data: bytes, content_type: str = "image/png", name: str = "page.png", **params):
    return httpx.post(f"{url}/v1/ocr", files={"file": (name, data, content_type)}, params=params, timeout=60)


@pytest.fixture(scope="module")
def server(tiny_detector_dir, tiny_recognizer_dir, tmp_path_factory):
    """`ocrkit serve` in its own process with tiny models and small limits; yields (url, pid)."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "server.log"
    cmd = [sys.executable, "-m", "ocrkit.cli", "serve", "--port", str(port), "--backend", "torch"]
    cmd += ["--det-model", str(tiny_detector_dir), "--rec-model", str(tiny_recognizer_dir), "--workers", "2"]
    cmd += ["--queue", "32", "--threads", "1", "--max-upload-mb", "1", "--max-pixels", "4000000"]
    cmd += ["--max-pages", "2", "--log-level", "warning"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.3)
    yield url, proc.pid
    proc.terminate()
    proc.wait(30)
    assert "Traceback" not in log.read_text()


class ThreadedServer:
    """uvicorn serving an app built in this process (to use stand-in models), on a free local port."""

    def __init__(self, app) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        port = int(self.url.rsplit(":", 1)[1])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(30)


class StandInOCR:
    """Reads nothing; waits for `gate` first (to hold requests in the pool) or fails (a bug)."""

    def __init__(self, fail: bool = False) -> None:
        self.gate = threading.Event()
        self.fail = fail

    def read(
        self,
        image: np.ndarray,
        name: str | None = "<array>",
        page: int = 1,
        min_confidence: float | None = None,
    ) -> Page:
        if self.fail:
            raise RuntimeError("boom")
        self.gate.wait(60)
        return Page(image=name, width=image.shape[1], height=image.shape[0], page=page)


LIMITS = Limits(max_upload_bytes=2**20, max_pixels=10**7, max_pages=5)


@pytest.mark.slow
def test_health_models_and_docs(server):
    url, _ = server
    health = httpx.get(f"{url}/healthz").json()
    assert health["status"] == "ok" and health["models_loaded"] is True
    models = httpx.get(f"{url}/v1/models").json()
    assert models["backend"] == "torch" and len(models["detector"]["version"]) == 16
    assert models["recognizer"]["task"] == "recognition"
    assert "swagger" in httpx.get(f"{url}/docs").text.lower()
    assert "/v1/ocr" in httpx.get(f"{url}/openapi.json").json()["paths"]


@pytest.mark.slow
def test_every_format_with_its_media_type(server):
    url, _ = server
    got = post(url, png())
    assert got.status_code == 200 and got.headers["content-type"] == "application/json"
    (page,) = got.json()["pages"]
    assert (page["image"], page["width"], page["height"]) == ("page.png", 260, 180)
    assert set(page) == {"image", "page", "width", "height", "seconds", "orientation", "lines"}
    text = post(url, png(), format="txt")
    assert text.headers["content-type"].startswith("text/plain")
    assert text.text == Page.from_dict(page).text + "\n" and page["lines"]
    assert post(url, png(), format="hocr").headers["content-type"].startswith("text/html")
    for fmt in ("alto", "page"):
        got = post(url, png(), format=fmt)
        assert got.headers["content-type"].startswith("application/xml")
        ET.fromstring(got.content)


@pytest.mark.slow
def test_pdf_pages(server):
    url, _ = server
    got = post(url, pdf(2), "application/pdf", "doc.pdf")
    assert [p["page"] for p in got.json()["pages"]] == [1, 2]
    assert post(url, pdf(2), "application/pdf", "doc.pdf", format="txt").text.count("\f") == 1
    assert post(url, pdf(2), "application/pdf", "doc.pdf", format="alto").json()["error"] == "one_page_format"
    one = post(url, pdf(2), "application/pdf", "doc.pdf", format="alto", page=2)
    assert one.status_code == 200 and b"<alto" in one.content


def _truncated_png() -> bytes:
    data = png(600, 400, seed=3)
    return data[: len(data) // 2]


BAD_INPUTS = {
    "empty": (b"", "image/png", {}, 400, "empty_file"),
    "not an image": (b"hello, I am text", "image/png", {}, 422, "not_an_image"),
    "corrupt image": (_truncated_png(), "image/png", {}, 422, "corrupt_image"),
    "too large (declared)": (os.urandom(3 * 2**20 // 2), "image/png", {}, 413, "too_large"),
    "too large (read)": (b"\x89PNG" + bytes(2**20), "image/png", {}, 413, "too_large"),
    "too many pixels": (png(2100, 2000), "image/png", {}, 413, "too_many_pixels"),
    "unsupported media type": (b"a,b\n1,2\n", "text/csv", {}, 415, "unsupported_media_type"),
    "too many PDF pages": (pdf(3), "application/pdf", {}, 413, "too_many_pages"),
    "corrupt PDF": (b"%PDF-1.7\nnot really", "application/pdf", {}, 422, "corrupt_pdf"),
    "unknown format": (png(), "image/png", {"format": "docx"}, 422, "invalid_request"),
    "page of an image": (png(), "image/png", {"page": 2}, 422, "no_such_page"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_a_json_4xx(server, case):
    url, _ = server
    data, content_type, params, status, code = BAD_INPUTS[case]
    got = post(url, data, content_type, **params)
    assert (got.status_code, got.json()["error"]) == (status, code), got.text
    assert set(got.json()) == {"error", "detail"} and got.json()["detail"]
    assert "Traceback" not in got.text and "ocrkit-upload-" not in got.text  # no temp paths either
    assert post(url, png()).status_code == 200  # and the server keeps serving


@pytest.mark.slow
def test_missing_file_field(server):
    url, _ = server
    got = httpx.post(f"{url}/v1/ocr", data={"nothing": "here"})
    assert got.status_code == 422 and got.json()["error"] == "invalid_request"
    assert httpx.get(f"{url}/v1/nothing").json()["error"] == "not_found"


@pytest.mark.slow
def test_twenty_concurrent_requests_all_answered(server):
    url, _ = server
    sizes = [(200 + 7 * i, 150 + 3 * i) for i in range(20)]
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda wh: post(url, png(*wh, seed=wh[0]), name=f"{wh[0]}.png"), sizes))
    assert [a.status_code for a in answers] == [200] * 20
    got = [(p["image"], p["width"], p["height"]) for a in answers for p in a.json()["pages"]]
    assert got == [(f"{w}.png", w, h) for w, h in sizes]  # nothing lost, nothing swapped


@pytest.mark.slow
def test_memory_does_not_grow_over_50_requests(server):
    url, pid = server
    proc = psutil.Process(pid)
    for seed in range(5):  # warm-up: allocator pools and caches reach their working size
        post(url, png(seed=seed))
    before = proc.memory_info().rss
    with httpx.Client(timeout=60) as client:
        for seed in range(50):
            files = {"file": ("p.png", png(300, 200, seed=seed), "image/png")}
            assert client.post(f"{url}/v1/ocr", files=files).status_code == 200
    grown = (proc.memory_info().rss - before) / 2**20
    assert grown < 100, f"RSS grew by {grown:.0f} MiB over 50 requests"


def test_queue_limit_gives_503_with_retry_after():
    ocr = StandInOCR()
    with (
        ThreadedServer(create_app(ocr, {}, LIMITS, workers=1, queue=1)) as url,
        ThreadPoolExecutor(2) as pool,
    ):
        held = []
        for expected in (1, 2):  # one request reading, one waiting: the pool is full
            held.append(pool.submit(post, url, png()))
            while httpx.get(f"{url}/healthz").json()["in_flight"] < expected:
                time.sleep(0.02)
        refused = post(url, png())
        assert refused.status_code == 503 and refused.json()["error"] == "busy"
        assert int(refused.headers["Retry-After"]) >= 1
        ocr.gate.set()
        assert [f.result().status_code for f in held] == [200, 200]
        assert post(url, png()).status_code == 200


def test_internal_error_is_a_logged_500_with_request_id(caplog):
    with ThreadedServer(create_app(StandInOCR(fail=True), {}, LIMITS)) as url:
        got = post(url, png())
        assert got.status_code == 500 and got.json()["error"] == "internal_error"
        rid = got.json()["request_id"]
        assert rid in got.json()["detail"] and got.headers["X-Request-ID"] == rid
        assert "boom" not in got.text and "Traceback" not in got.text
        assert httpx.get(f"{url}/healthz").status_code == 200
    logged = [r for r in caplog.records if r.name == "ocrkit.serve" and rid in r.getMessage()]
    assert logged and logged[0].exc_info and "boom" in str(logged[0].exc_info[1])


@pytest.mark.slow
def test_sample_page_matches_ocrkit_infer(tmp_path, capsys):
    """The shipped models, through the same app `ocrkit serve` builds, give infer's JSON and text."""
    from ocrkit.commands.serve import build_app

    assert main(["infer", str(SAMPLE), "--out", str(tmp_path), "--format", "json", "--backend", "torch"]) == 0
    expected = json.loads((tmp_path / f"{SAMPLE.name}.json").read_text())
    with ThreadedServer(build_app(build_parser().parse_args(["serve", "--backend", "torch"]))) as url:
        (page,) = post(url, SAMPLE.read_bytes(), "image/jpeg", SAMPLE.name).json()["pages"]
    for d in (page, expected):
        d.pop("seconds"), d.pop("image")
    assert page == expected and len(page["lines"]) > 5


def test_serve_without_fastapi_says_how_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # import fails as if the extra were not installed
    assert main(["serve"]) == 2
    assert "pip install 'ocrkit[serve]'" in capsys.readouterr().err


def tiff(sizes: list[tuple[int, int]]) -> bytes:
    frames = [Image.fromarray(np.full((h, w, 3), 230, np.uint8)) for w, h in sizes]
    buf = io.BytesIO()
    frames[0].save(buf, format="TIFF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def open_app() -> tuple[StandInOCR, object]:
    ocr = StandInOCR()
    ocr.gate.set()  # reads at once
    return ocr, create_app(ocr, {}, LIMITS)


def test_every_page_of_a_multipage_tiff_is_read_and_page_n_picks_one():
    sizes = [(200, 100), (210, 110), (220, 120)]
    _, app = open_app()
    with ThreadedServer(app) as url:
        got = post(url, tiff(sizes), "image/tiff", "m.tif")
        assert [(p["page"], p["width"], p["height"]) for p in got.json()["pages"]] == [
            (1, 200, 100),
            (2, 210, 110),
            (3, 220, 120),
        ]
        (page,) = post(url, tiff(sizes), "image/tiff", "m.tif", page=2).json()["pages"]
        assert (page["page"], page["width"]) == (2, 210)
        missing = post(url, tiff(sizes), "image/tiff", "m.tif", page=4)
        assert missing.status_code == 422 and missing.json()["detail"] == "the TIFF has 3 pages, not 4"
        too_many = post(url, tiff([(50, 40)] * 6), "image/tiff", "m.tif")  # LIMITS.max_pages is 5
        assert too_many.status_code == 413 and too_many.json()["error"] == "too_many_pages"


def test_a_pdf_with_bytes_before_its_header_is_read_as_infer_reads_it():
    _, app = open_app()
    with ThreadedServer(app) as url:
        got = post(url, b"junk from a mail gateway\r\n" + pdf(2), "application/pdf", "d.pdf")
        assert got.status_code == 200 and [p["page"] for p in got.json()["pages"]] == [1, 2]


def test_a_chunked_upload_is_refused_at_the_limit_while_it_streams():
    """No Content-Length: the body is counted as it arrives and refused long before it ends."""
    _, app = open_app()
    total = 64 * 2**20  # 64 times LIMITS.max_upload_bytes
    with ThreadedServer(app) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            head = b'--B\r\nContent-Disposition: form-data; name="file"; filename="z.png"\r\n\r\n'
            s.sendall(
                b"POST /v1/ocr HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                b"Content-Type: multipart/form-data; boundary=B\r\n\r\n" + b"%x\r\n%s\r\n" % (len(head), head)
            )
            chunk = b"%x\r\n%s\r\n" % (2**16, bytes(2**16))
            sent, answer = 0, b""
            s.setblocking(False)
            while sent < total:
                try:
                    answer = s.recv(4096)
                    break
                except BlockingIOError:
                    pass
                try:
                    s.send(chunk)  # partial sends only shift the stream: the server stops at the limit
                    sent += 2**16
                except BlockingIOError:
                    time.sleep(0.001)
            s.setblocking(True)
            while answer and not answer.endswith(b"}"):  # the rest of the answer, if it came in parts
                more = s.recv(4096)
                if not more:
                    break
                answer += more
        assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
        assert b'"error":"too_large"' in answer and b"x-request-id" in answer.lower()
        assert sent < total / 2  # answered while the client was still sending
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_convert_waits_its_turn_in_the_pool():
    """/v1/convert is parsed and written by a pool worker: with the pool full it is refused like a
    reading, so a large body can neither block the event loop (/healthz) nor pass the worker limits."""
    ocr = StandInOCR()
    answer = {"pages": [{"image": "p.png", "width": 100, "height": 50, "lines": []}]}
    with (
        ThreadedServer(create_app(ocr, {}, LIMITS, workers=1, queue=0)) as url,
        ThreadPoolExecutor(1) as pool,
    ):
        held = pool.submit(post, url, png())
        while httpx.get(f"{url}/healthz").json()["in_flight"] < 1:
            time.sleep(0.02)
        refused = httpx.post(f"{url}/v1/convert", params={"format": "alto"}, json=answer)
        assert refused.status_code == 503 and refused.json()["error"] == "busy"
        ocr.gate.set()
        assert held.result().status_code == 200
        assert httpx.post(f"{url}/v1/convert", params={"format": "alto"}, json=answer).status_code == 200


def test_a_tiff_of_many_tiny_pages_is_refused_without_counting_them_all():
    from fixtures import tiny_page_tiff

    many = tiny_page_tiff(60_000)  # 6 MB
    ocr, _ = open_app()
    limits = Limits(max_upload_bytes=2**23, max_pixels=10**7, max_pages=5)
    with ThreadedServer(create_app(ocr, {}, limits)) as url:
        start = time.monotonic()
        refused = post(url, many, "image/tiff", "many.tif")
        assert (refused.status_code, refused.json()["error"]) == (413, "too_many_pages")
        assert "more than 5 pages" in refused.json()["detail"]
        (page,) = post(url, many, "image/tiff", "many.tif", page=7).json()["pages"]
        assert page["page"] == 7
        files = {"file": ("many.tif", many, "image/tiff")}
        shown = httpx.post(f"{url}/v1/page-image", files=files, params={"page": 2}, timeout=60)
        assert shown.status_code == 200 and shown.headers["X-Page-Count"] == "60000"
        assert time.monotonic() - start < 10  # counting with Pillow took minutes
