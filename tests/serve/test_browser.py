"""The web page and the API docs of `ocrkit serve` in a real browser: Debian's chromium, headless, driven
by selenium through Debian's chromedriver (nothing is downloaded). The page reads the receipt sample with
the shipped models, draws its boxes and lists its text, offers working downloads and shows API errors;
/docs renders every operation from the service's own copy of Swagger UI."""

import io
import json
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import numpy as np
import pytest
from fixtures import SAMPLES, serving
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from ocrkit.cli import build_parser
from ocrkit.commands.serve import build_app

SAMPLE = SAMPLES / "synthetic_receipt.jpg"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
]
WAIT = 90  # seconds for the page to be read: two busy CPU cores read the receipt in about 10


def _browser_or_skip() -> None:
    if CHROMIUM and CHROMEDRIVER:
        return
    why = "chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(f"{why}: the README set-up installs them, and CI must run this test")
    pytest.skip(why)


@pytest.fixture(scope="module")
def url():
    _browser_or_skip()
    with serving(build_app(build_parser().parse_args(["serve", "--backend", "torch"]))) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    _browser_or_skip()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="ocrkit-chromium-")
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_script_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _wait(driver, condition, what: str, seconds: float = WAIT):
    return WebDriverWait(driver, seconds, poll_frequency=0.2).until(condition, message=what)


def _fetch_text(driver, href: str) -> str:
    """What a download link holds, fetched inside the page (its links are blob: URLs)."""
    script = (
        "const done = arguments[1]; fetch(arguments[0]).then(r => r.text()).then(done, e => done('!' + e));"
    )
    return driver.execute_async_script(script, href)


def _choose(driver, path: Path) -> None:
    driver.find_element(By.ID, "file").send_keys(str(path))


def _done(driver) -> bool:
    links = driver.find_elements(By.CSS_SELECTOR, "#downloads a[data-format]")
    return bool(links) and all(a.get_attribute("href") for a in links) and "done" in _status(driver)


def _status(driver) -> str:
    return driver.execute_script("return document.getElementById('status').textContent")


@pytest.mark.slow
def test_page_reads_the_receipt_and_draws_its_boxes(url, browser):
    browser.get(f"{url}/")
    _wait(browser, lambda d: "recognizer" in d.find_element(By.ID, "models").text, "the models' names")
    _choose(browser, SAMPLE)
    _wait(browser, _done, "the receipt read and its downloads ready")
    assert not browser.find_element(By.ID, "error").is_displayed()

    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#lines li")]
    rects = browser.find_elements(By.CSS_SELECTOR, "#boxes rect")
    assert len(items) > 10 and len(rects) == len(items)
    assert "SUBTOTAL" in " ".join(items)  # real text came through, not just boxes
    assert "read in" in browser.find_element(By.ID, "timings").text

    # the JSON download is the page as read; every box is drawn where its bbox says, inside the picture
    links = {
        a.get_attribute("data-format"): a
        for a in browser.find_elements(By.CSS_SELECTOR, "#downloads a[data-format]")
    }
    page = json.loads(_fetch_text(browser, links["json"].get_attribute("href")))
    assert links["json"].get_attribute("download") == "synthetic_receipt.jpg.json"
    assert [line["text"] for line in page["lines"]] == items
    drawn = [[float(r.get_attribute(k)) for k in ("x", "y", "width", "height")] for r in rects]
    expected = [[x0, y0, x1 - x0, y1 - y0] for x0, y0, x1, y1 in (ln["bbox"] for ln in page["lines"])]
    assert np.allclose(drawn, expected)
    view = browser.find_element(By.ID, "page-view").rect
    first = rects[0].rect
    assert first["width"] > 20 and first["height"] > 3
    assert view["x"] <= first["x"] and first["x"] + first["width"] <= view["x"] + view["width"] + 1

    # the picture is the page (not blank) and the boxes' red is on it
    shot = np.asarray(
        Image.open(io.BytesIO(browser.find_element(By.ID, "view").screenshot_as_png)).convert("RGB")
    )
    assert shot.std() > 20
    red = (shot[..., 0] > 180) & (shot[..., 1] < 90) & (shot[..., 2] < 90)
    assert red.sum() > 500

    # hovering a line highlights its box
    ActionChains(browser).move_to_element(browser.find_elements(By.CSS_SELECTOR, "#lines li")[2]).perform()
    assert "hot" in rects[2].get_attribute("class") and "hot" not in (rects[0].get_attribute("class") or "")

    # ALTO written from the returned JSON holds the same lines
    alto = _fetch_text(browser, links["alto"].get_attribute("href"))
    assert links["alto"].get_attribute("download") == "synthetic_receipt.jpg.alto.xml"
    words = [
        s.get("CONTENT") for s in ET.fromstring(alto).iter("{http://www.loc.gov/standards/alto/ns-v4#}String")
    ]
    assert " ".join(words).split() == " ".join(items).split()

    # the searchable PDF is written on the first click, then downloads under the page's name
    pdf_link = browser.find_element(By.ID, "pdf-download")
    browser.execute_script("arguments[0].scrollIntoView(); arguments[0].click();", pdf_link)
    _wait(browser, lambda d: pdf_link.get_attribute("href"), "the searchable PDF")
    assert pdf_link.get_attribute("download") == "synthetic_receipt.jpg.pdf"
    head = browser.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0]).then(r => r.arrayBuffer())"
        ".then(b => done(String.fromCharCode(...new Uint8Array(b.slice(0, 5)))), e => done('!' + e));",
        pdf_link.get_attribute("href"),
    )
    assert head == "%PDF-"

    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    _assert_loaded_only_from(browser, url)


@pytest.mark.slow
def test_text_and_downloads_stay_in_view_from_phone_to_desktop_width(url, browser):
    browser.set_window_size(1440, 900)
    browser.get(f"{url}/")
    _wait(browser, lambda d: "MB" in d.find_element(By.ID, "limits").text, "the limits")
    assert "ocrkit line recognizer" in browser.find_element(By.ID, "models").text  # release names
    assert not browser.find_element(By.ID, "keep-choice").is_displayed()  # the service drops no line
    _choose(browser, SAMPLE)
    _wait(browser, _done, "the receipt read")
    for width in (390, 800, 1440):
        browser.set_window_size(width, 900)
        page_width = browser.execute_script("return document.documentElement.clientWidth")
        for element in ("lines", "downloads", "copy", "view"):
            box = browser.find_element(By.ID, element)
            browser.execute_script("arguments[0].scrollIntoView({block: 'nearest'})", box)
            rect = box.rect
            assert box.is_displayed() and rect["height"] > 10, (width, element, rect)
            assert rect["x"] >= 0 and rect["x"] + rect["width"] <= page_width + 1, (width, element, rect)
        assert len(browser.find_element(By.ID, "lines").text.splitlines()) > 10, width
    # the copy button copies the page's text as the txt download holds it (or selects the list)
    browser.find_element(By.ID, "copy").click()
    _wait(browser, lambda d: "copied" in _status(d) or "selected" in _status(d), "the copy said")
    txt = _fetch_text(
        browser, browser.find_element(By.CSS_SELECTOR, '[data-format="txt"]').get_attribute("href")
    )
    assert browser.execute_script("return pageText") == txt and "SUBTOTAL" in txt
    assert browser.execute_script("document.getElementById('keep-unsure').checked = true; return cut()") == {
        "min_confidence": 0
    }


def _assert_loaded_only_from(driver, url: str) -> None:
    """Every script, style sheet and picture the page loaded came from the service (or the page)."""
    loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    outside = [u for u in loaded if not u.startswith((url, "blob:", "data:"))]
    assert not outside, outside


@pytest.mark.slow
def test_page_shows_refusals_and_pdf_pages(url, browser, tmp_path):
    browser.get(f"{url}/")
    drop = """
        const data = new DataTransfer();
        data.items.add(new File(["not a page\\n"], "notes.txt", {type: "text/plain"}));
        document.getElementById("drop").dispatchEvent(new DragEvent("drop", {dataTransfer: data}));
    """
    browser.execute_script(drop)  # a file dropped on the drop zone
    error = _wait(browser, lambda d: d.find_element(By.ID, "error").text, "the refusal shown")
    assert error.startswith("Not an image or a PDF (415): text/plain")
    assert browser.find_element(By.ID, "result").is_displayed() is False
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    _choose(browser, broken)
    _wait(browser, lambda d: "422" in d.find_element(By.ID, "error").text, "the second refusal shown")
    assert (
        browser.find_element(By.ID, "error").text
        == "Cannot read this file (422): not a recognised image format"
    )

    # what the page says for the service's other refusals (413 and 503 are hard to provoke here)
    sentence = """
        const [status, body, headers, done] = arguments;
        refusal(new Response(JSON.stringify(body), {status, headers})).then(done);
    """
    busy = {"error": "busy", "detail": "all workers are busy; retry later"}
    got = browser.execute_async_script(sentence, 503, busy, {"Retry-After": "3"})
    assert got == "The server is busy (503): all workers are busy; retry later; try again in 3 s"
    big = {"error": "too_large", "detail": "the upload is larger than 20971520 bytes"}
    assert browser.execute_async_script(sentence, 413, big, {}) == f"Too large (413): {big['detail']}"

    pages = [np.full((300, 500 + 200 * i, 3), 255, np.uint8) for i in range(2)]
    for i, page in enumerate(pages):
        page[100:130, 60 : 260 + 100 * i] = 0  # one dark bar a page, longer on page 2
    pdf = tmp_path / "two.pdf"
    Image.fromarray(pages[0]).save(
        pdf, save_all=True, append_images=[Image.fromarray(pages[1])], resolution=72
    )
    _choose(browser, pdf)
    _wait(browser, _done, "page 1 of the PDF")
    assert not browser.find_element(By.ID, "error").is_displayed()
    assert browser.find_element(By.ID, "page-count").text == "2"
    width_1 = _page_width(browser)
    Select(browser.find_element(By.ID, "page")).select_by_value("2")
    _wait(browser, lambda d: "page 2 of 2: done" in _status(d), "page 2 of the PDF")
    assert _page_width(browser) > width_1  # page 2 is the wider page, rendered by the server
    link = browser.find_element(By.CSS_SELECTOR, "#downloads a[data-format='page']")
    assert link.get_attribute("download") == "two.pdf-p2.page.xml"


def _page_width(driver) -> float:
    return float(driver.execute_script("return document.getElementById('page-view').viewBox.baseVal.width"))


@pytest.mark.slow
def test_api_docs_render_every_operation_offline(url, browser):
    spec = httpx.get(f"{url}/openapi.json").json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert operations >= 5
    browser.get(f"{url}/docs")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"), "Swagger UI's operations", 30)
    shown = browser.find_elements(By.CSS_SELECTOR, ".opblock .opblock-summary-path")
    assert sorted(el.get_attribute("data-path") for el in shown) == sorted(
        path for path, methods in spec["paths"].items() for _ in methods
    )
    _assert_loaded_only_from(browser, url)
    browser.get(f"{url}/redoc")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-section-id^='operation/']"), "ReDoc", 30)
