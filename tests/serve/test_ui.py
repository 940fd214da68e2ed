"""What the web page of `ocrkit serve` relies on, without a browser: the page and its files, --no-ui, a
URL prefix, the offline API docs, the page picture (/v1/page-image) and /v1/convert. A stand-in OCR
returns fixed lines, so these run in well under a second each."""

import io
import re
import xml.etree.ElementTree as ET

import httpx
import numpy as np
import pytest
from fixtures import serving
from PIL import Image

from ocrkit.cli import build_parser
from ocrkit.pages import formats
from ocrkit.pages.document import Line, Page
from ocrkit.serve.app import create_app
from ocrkit.serve.preview import MAX_SIDE
from ocrkit.serve.uploads import Limits

LIMITS = Limits(max_upload_bytes=2**22, max_pixels=10**7, max_pages=5)


class TwoLines:
    """Reads two fixed lines (one with XML-special characters) on any page, scaled to its size; the second,
    read less sure, is dropped at a `min_confidence` above 0.889 (the service's own cut: 0)."""

    def read(
        self, image: np.ndarray, name: str = "<array>", page: int = 1, min_confidence: float | None = None
    ) -> Page:
        h, w = image.shape[:2]
        lines = [
            Line([0.1 * w, 0.1 * h, 0.9 * w, 0.2 * h], "TOTAL 12.50 <&>", 0.9, 0.95, 0.947),
            Line([0.1 * w, 0.5 * h, 0.6 * w, 0.6 * h], f"page {page}", 0.8, 0.9, 0.889),
        ]
        kept = [line for line in lines if line.rec_score >= (min_confidence or 0.0)]
        return Page(image=name, width=w, height=h, page=page, seconds=0.25, lines=kept)


def image_bytes(w: int, h: int, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((h, w, 3), 200, np.uint8)).save(buf, format=fmt)
    return buf.getvalue()


def pdf(sizes: list[tuple[int, int]]) -> bytes:
    images = [Image.fromarray(np.full((h, w, 3), 220, np.uint8)) for w, h in sizes]
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", save_all=True, append_images=images[1:], resolution=72)
    return buf.getvalue()


MODELS = {  # what describe_models reports of two shipped folders
    "ocrkit": "0.3.0",
    "backend": "onnx",
    "detector": {"name": "detector", "release": "ocrkit line detector 0.7.0", "version": "0123456789abcdef"},
    "recognizer": {
        "name": "recognizer",
        "release": "ocrkit line recognizer 0.10.0",
        "version": "fedcba9876543210",
    },
    "min_confidence": 0.0,
}


@pytest.fixture(scope="module")
def client():
    with serving(create_app(TwoLines(), MODELS, LIMITS)) as url, httpx.Client(base_url=url, timeout=30) as c:
        yield c


def upload(client, path: str, data: bytes, content_type: str = "image/png", **params):
    return client.post(path, files={"file": ("scan.png", data, content_type)}, params=params)


def test_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<base href="/">' in page.text and 'id="file"' in page.text
    for src in re.findall(r'(?:src|href)="(ui/[^"]+)"', page.text):
        got = client.get("/" + src)
        assert got.status_code == 200 and len(got.content) > 500, src
    assert client.get("/ui/app.js").headers["content-type"].startswith(("text/javascript", "application/"))
    assert client.get("/ui/nothing.js").json()["error"] == "not_found"
    assert not any(path == "/" for path in client.get("/openapi.json").json()["paths"])


def test_no_ui_option_turns_the_page_off():
    assert build_parser().parse_args(["serve", "--no-ui"]).ui is False
    assert build_parser().parse_args(["serve"]).ui is True
    with serving(create_app(TwoLines(), {}, LIMITS, ui=False)) as url, httpx.Client(base_url=url) as c:
        assert c.get("/").status_code == 404 and c.get("/").json()["error"] == "not_found"
        assert c.get("/ui/app.js").status_code == 404
        assert c.get("/docs").status_code == 200  # the API and its docs stay


def test_behind_a_prefix_every_link_keeps_it():
    assert build_parser().parse_args(["serve", "--root-path", "/ocr"]).root_path == "/ocr"
    # the proxy takes /ocr off the path (nginx: location /ocr/ { proxy_pass http://127.0.0.1:8000/; })
    with serving(create_app(TwoLines(), {}, LIMITS), root_path="/ocr") as url:
        assert '<base href="/ocr/">' in httpx.get(f"{url}/").text
        assert httpx.get(f"{url}/ui/app.js").status_code == 200
        docs = httpx.get(f"{url}/docs").text
        assert "/ocr/openapi.json" in docs and "/ocr/static-offline-docs/swagger-ui-bundle.js" in docs
        assert httpx.get(f"{url}/static-offline-docs/swagger-ui-bundle.js").status_code == 200
        assert httpx.get(f"{url}/openapi.json").json()["servers"] == [{"url": "/ocr"}]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_api_docs_load_nothing_from_elsewhere(client, path):
    html = client.get(path).text
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html) + re.findall(r"url: *'([^']+)'", html)
    assert refs and not [r for r in refs if "//" in r], refs  # no http(s)://, no protocol-relative URLs
    scripts = [r for r in refs if r.endswith(".js")]
    assert scripts and all(len(client.get(r).content) > 100_000 for r in scripts)  # the real bundles


def test_page_image_has_the_size_of_the_boxes_pixels(client):
    got = upload(client, "/v1/page-image", image_bytes(260, 180))
    assert got.status_code == 200 and got.headers["content-type"] == "image/jpeg"
    assert (got.headers["X-Page-Width"], got.headers["X-Page-Height"], got.headers["X-Page-Count"]) == (
        "260",
        "180",
        "1",
    )
    assert Image.open(io.BytesIO(got.content)).size == (260, 180)
    big = upload(client, "/v1/page-image", image_bytes(3000, 1200))
    assert (big.headers["X-Page-Width"], big.headers["X-Page-Height"]) == ("3000", "1200")
    assert Image.open(io.BytesIO(big.content)).size == (MAX_SIDE, 960)  # scaled down, same shape


def test_page_image_of_a_pdf_page_matches_what_ocr_reads(client):
    data = pdf([(200, 150), (300, 120), (100, 100)])
    got = upload(client, "/v1/page-image", data, "application/pdf", page=2)
    (read,) = upload(client, "/v1/ocr", data, "application/pdf", page=2).json()["pages"]
    assert got.headers["X-Page-Count"] == "3"
    size = (int(got.headers["X-Page-Width"]), int(got.headers["X-Page-Height"]))
    assert size == (read["width"], read["height"]) and size[0] > size[1]  # page 2 is the wide one
    assert Image.open(io.BytesIO(got.content)).size == size


@pytest.mark.parametrize(
    ("data", "content_type", "params", "status", "code"),
    [
        (b"a,b\n1,2\n", "text/csv", {}, 415, "unsupported_media_type"),
        (b"hello, I am text", "image/png", {}, 422, "not_an_image"),
        (b"", "image/png", {}, 400, "empty_file"),
        (image_bytes(10, 10), "image/png", {"page": 2}, 422, "no_such_page"),
        (pdf([(50, 50)] * 2), "application/pdf", {"page": 3}, 422, "no_such_page"),
        (image_bytes(4000, 3000), "image/png", {}, 413, "too_many_pixels"),
    ],
)
def test_page_image_refuses_as_ocr_does(client, data, content_type, params, status, code):
    for path in ("/v1/page-image", "/v1/ocr"):
        got = upload(client, path, data, content_type, **params)
        assert (got.status_code, got.json()["error"]) == (status, code), (path, got.text)


def _undated(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "DATE", text)


@pytest.mark.parametrize("fmt", ["json", "txt", "hocr", "alto", "page"])
def test_convert_writes_what_ocr_would_have(client, fmt):
    data = image_bytes(400, 300)
    answer = upload(client, "/v1/ocr", data).json()
    direct = upload(client, "/v1/ocr", data, format=fmt)
    converted = client.post("/v1/convert", params={"format": fmt}, json=answer)
    assert converted.status_code == 200
    assert converted.headers["content-type"] == direct.headers["content-type"]
    assert _undated(converted.text) == _undated(direct.text)
    if fmt in ("alto", "page"):
        ET.fromstring(converted.content)
    page = Page.from_dict(answer["pages"][0])
    assert "TOTAL 12.50 <&>" in page.text and _undated(formats.to_alto(page)) == _undated(
        client.post("/v1/convert", params={"format": "alto"}, json=answer).text
    )


def test_convert_keeps_the_words_and_sends_pdf_to_ocr(client):
    answer = upload(client, "/v1/ocr", image_bytes(400, 300)).json()
    answer["pages"][0]["lines"][1]["words"] = [{"bbox": [40, 150, 80, 180], "text": "page", "score": 0.8}]
    alto = ET.fromstring(client.post("/v1/convert", params={"format": "alto"}, json=answer).content)
    strings = [e.get("CONTENT") for e in alto.iter() if e.tag.endswith("}String")]
    assert strings == ["TOTAL 12.50 <&>", "page"]
    got = client.post("/v1/convert", params={"format": "pdf"}, json=answer)
    assert (got.status_code, got.json()["error"]) == (422, "pdf_needs_the_file")


def test_ocr_writes_a_searchable_pdf_of_a_picture_and_of_a_pdf(client):
    import pypdfium2 as pdfium

    got = upload(client, "/v1/ocr", image_bytes(400, 300), format="pdf")
    assert got.status_code == 200 and got.headers["content-type"] == "application/pdf"
    (page,) = pdfium.PdfDocument(got.content)
    assert " ".join(page.get_textpage().get_text_range().split()) == "TOTAL 12.50 <&> page 1"
    two = upload(client, "/v1/ocr", pdf([(300, 200), (200, 300)]), "application/pdf", format="pdf")
    document = pdfium.PdfDocument(two.content)
    assert [p.get_size() for p in document] == [(300.0, 200.0), (200.0, 300.0)]  # its own pages, kept
    assert "page 2" in document[1].get_textpage().get_text_range()
    only = pdfium.PdfDocument(
        upload(client, "/v1/ocr", pdf([(300, 200)] * 2), "application/pdf", format="pdf", page=2).content
    )
    assert len(only) == 2 and only[0].get_textpage().get_text_range() == ""


def test_convert_refuses_what_is_not_pages(client):
    for body in ({}, {"pages": []}, {"pages": [{"image": "a", "width": 10}]}, [1, 2]):
        got = client.post("/v1/convert", params={"format": "alto"}, json=body)
        assert (got.status_code, got.json()["error"]) == (422, "invalid_request"), body
    two = {"pages": [{"image": "a", "width": 10, "height": 10, "page": n} for n in (1, 2)]}
    assert (
        client.post("/v1/convert", params={"format": "alto"}, json=two).json()["error"] == "one_page_format"
    )


@pytest.mark.parametrize("fmt", ["json", "txt", "hocr", "alto", "page"])
def test_convert_refuses_non_finite_numbers_and_lone_surrogates(client, fmt):
    lines = [
        '{"bbox": [NaN, 2, 3, 4], "text": "x"}',
        '{"bbox": [1, 2, Infinity, 4], "text": "x"}',
        '{"bbox": [1, 2, 3, 4], "text": "x", "score": NaN}',
        '{"bbox": [1, 2, 3, 4], "text": "x", "score": 1e400}',
        '{"bbox": [1, 2, 3, 4], "text": "\\ud800x"}',
    ]
    for case in lines:
        body = '{"pages": [{"image": "p.png", "width": 100, "height": 50, "lines": [' + case + "]}]}"
        got = client.post(
            "/v1/convert", params={"format": fmt}, content=body, headers={"Content-Type": "application/json"}
        )
        assert (got.status_code, got.json()["error"]) == (422, "invalid_request"), case
        assert got.json()["detail"].startswith("body"), got.text


def test_convert_body_is_documented(client):
    body = client.get("/openapi.json").json()["paths"]["/v1/convert"]["post"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    line = schema["properties"]["pages"]["items"]["properties"]["lines"]["items"]
    assert "bbox" in line["properties"] and "$ref" not in str(schema)


def test_models_answer_names_the_releases_the_cut_and_the_limits(client):
    answer = client.get("/v1/models").json()
    assert answer["detector"]["release"] == "ocrkit line detector 0.7.0" and answer["min_confidence"] == 0.0
    assert answer["limits"] == {"max_upload_bytes": 2**22, "max_pixels": 10**7, "max_pages": 5}


def test_a_request_chooses_its_own_confidence_cut(client):
    png = image_bytes(200, 100)
    every = upload(client, "/v1/ocr", png).json()["pages"][0]["lines"]
    sure = upload(client, "/v1/ocr", png, min_confidence=0.9).json()["pages"][0]["lines"]
    assert [line["text"] for line in every] == ["TOTAL 12.50 <&>", "page 1"]
    assert [line["text"] for line in sure] == ["TOTAL 12.50 <&>"]
    refused = upload(client, "/v1/ocr", png, min_confidence=1.0)
    assert refused.status_code == 422 and "min_confidence" in refused.json()["detail"]


def test_the_api_document_types_every_answer(client):
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    assert {"Health", "ModelsAnswer", "ErrorAnswer"} <= set(schemas)
    ocr = spec["paths"]["/v1/ocr"]["post"]["responses"]
    pages = ocr["200"]["content"]["application/json"]["schema"]
    assert pages["properties"]["pages"]["items"]["properties"]["lines"]["items"]["properties"]["bbox"]
    assert {"400", "413", "415", "422", "500", "503"} <= set(ocr)
    assert ocr["503"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorAnswer")
    health = spec["paths"]["/healthz"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert health["$ref"].endswith("/Health")
