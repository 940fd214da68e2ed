"use strict";
// The ocrkit web page: an upload goes to /v1/page-image (the page as the models see it, for a picture
// even of a PDF or TIFF) and then to /v1/ocr; the lines' boxes are drawn over the picture in the page's
// pixels, the text is listed in reading order, and the downloads are written by /v1/convert from the
// JSON already returned, so nothing is read twice; only the searchable PDF, which holds the page itself,
// is asked of /v1/ocr again, when its link is clicked. Every URL is relative to the page's <base>.

const EXTENSIONS = { json: "json", txt: "txt", alto: "alto.xml", page: "page.xml", hocr: "hocr" };
const REFUSALS = {
  400: "Empty file",
  413: "Too large",
  415: "Not an image or a PDF",
  422: "Cannot read this file",
  500: "Server error",
  503: "The server is busy",
};
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

let latest = 0; // number of the latest reading: answers that arrive for an older one are dropped
let objectUrls = []; // blob URLs of the result on show, released when the next reading starts
let chosen = null; // the file being shown
let pageText = ""; // the text of the page on show, for the copy button

async function refusal(response) {
  // A readable sentence from the service's {"error", "detail"} (or a proxy's bare status).
  let detail = response.statusText || "no detail";
  try {
    const body = await response.json();
    detail = body.detail || body.error || detail;
  } catch {
    // not JSON: keep the status text
  }
  const what = REFUSALS[response.status] || `HTTP ${response.status}`;
  const retry = response.headers.get("Retry-After");
  return `${what} (${response.status}): ${detail}` + (retry ? `; try again in ${retry} s` : "");
}

async function post(path, body, params, headers = {}) {
  const query = new URLSearchParams(params).toString();
  let response;
  try {
    response = await fetch(`${path}?${query}`, { method: "POST", body, headers });
  } catch (err) {
    throw new Error(`Cannot reach the service: ${err.message}`);
  }
  if (!response.ok) throw new Error(await refusal(response));
  return response;
}

function upload(file) {
  const form = new FormData();
  form.append("file", file, file.name);
  return form;
}

function blobUrl(blob) {
  const url = URL.createObjectURL(blob);
  objectUrls.push(url);
  return url;
}

function setStatus(text) {
  $("status").textContent = text;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

function clearResult() {
  objectUrls.forEach((url) => URL.revokeObjectURL(url));
  objectUrls = [];
  $("result").hidden = true;
  $("page-view").replaceChildren();
  $("lines").replaceChildren();
  $("timings").textContent = "";
  pageText = "";
  $("copy").disabled = true;
  for (const a of document.querySelectorAll("#downloads a")) a.removeAttribute("href");
}

function showPageChoice(page, pages) {
  $("page-choice").hidden = pages < 2;
  $("page-count").textContent = pages;
  const select = $("page");
  if (select.options.length !== pages) {
    select.replaceChildren(...Array.from({ length: pages }, (_, i) => new Option(i + 1, i + 1)));
  }
  select.value = page;
}

function drawPage(src, width, height) {
  const svg = $("page-view");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const image = document.createElementNS(SVG, "image");
  for (const [k, v] of Object.entries({ href: src, width, height, preserveAspectRatio: "none" })) {
    image.setAttribute(k, v);
  }
  const boxes = document.createElementNS(SVG, "g");
  boxes.id = "boxes";
  svg.replaceChildren(image, boxes);
  $("result").hidden = false;
}

function highlight(index, on) {
  for (const el of document.querySelectorAll(`[data-line="${index}"]`)) el.classList.toggle("hot", on);
}

function hoverable(el, index, partner) {
  el.dataset.line = index;
  el.addEventListener("mouseenter", () => {
    highlight(index, true);
    partner()?.scrollIntoView({ block: "nearest" });
  });
  el.addEventListener("mouseleave", () => highlight(index, false));
}

function drawLines(page) {
  const boxes = $("boxes");
  const list = $("lines");
  page.lines.forEach((line, i) => {
    const [x0, y0, x1, y1] = line.bbox;
    const rect = document.createElementNS(SVG, "rect");
    for (const [k, v] of Object.entries({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 })) {
      rect.setAttribute(k, v);
    }
    const title = document.createElementNS(SVG, "title");
    title.textContent = line.text;
    rect.append(title);
    const item = document.createElement("li");
    item.textContent = line.text;
    item.title = `score ${line.score.toFixed(2)} (detection ${line.det_score.toFixed(2)}, `
      + `recognition ${line.rec_score.toFixed(2)})`;
    hoverable(rect, i, () => item);
    hoverable(item, i, () => null);
    boxes.append(rect);
    list.append(item);
  });
}

async function offerDownloads(page, stem, reading) {
  const pages = JSON.stringify({ pages: [page] });
  const links = Array.from(document.querySelectorAll("#downloads a[data-format]"));
  await Promise.all(links.map(async (a) => {
    const format = a.dataset.format;
    const blob = format === "json"
      ? new Blob([JSON.stringify(page, null, 2) + "\n"], { type: "application/json" })
      : await (await post("v1/convert", pages, { format }, { "Content-Type": "application/json" })).blob();
    if (reading !== latest) return;
    a.href = blobUrl(blob);
    a.download = `${stem}.${EXTENSIONS[format]}`;
    if (format === "txt") {
      pageText = await blob.text(); // what the copy button copies: the page's text as ocrkit writes it
      $("copy").disabled = false;
    }
  }));
}

function offerPdf(file, page, stem, reading) {
  // Written on the first click (the page is read again for it), then downloaded like the others.
  const a = $("pdf-download");
  a.onclick = async (event) => {
    if (a.getAttribute("href")) return;
    event.preventDefault();
    setStatus("Writing the searchable PDF…");
    try {
      const pdf = await (await post("v1/ocr", upload(file), { format: "pdf", page, ...cut() })).blob();
      if (reading !== latest) return;
      a.href = blobUrl(pdf);
      a.download = `${stem}.pdf`;
      setStatus("");
      a.click();
    } catch (err) {
      if (reading === latest) showError(err.message);
    }
  };
}

async function read(file, page) {
  const reading = ++latest;
  clearResult();
  showError("");
  setStatus(`Opening ${file.name}…`);
  try {
    const picture = await post("v1/page-image", upload(file), { page });
    const pages = Number(picture.headers.get("X-Page-Count")) || 1;
    const width = Number(picture.headers.get("X-Page-Width"));
    const height = Number(picture.headers.get("X-Page-Height"));
    const src = blobUrl(await picture.blob());
    if (reading !== latest) return;
    showPageChoice(page, pages);
    drawPage(src, width, height);
    const what = pages > 1 ? `${file.name}, page ${page} of ${pages}` : file.name;
    setStatus(`Reading ${what}…`);
    const started = performance.now();
    const answer = await (await post("v1/ocr", upload(file), { page, ...cut() })).json();
    const wall = (performance.now() - started) / 1000;
    if (reading !== latest) return;
    const result = answer.pages[0];
    drawLines(result);
    $("timings").textContent = `${result.lines.length} lines, read in ${result.seconds.toFixed(2)} s `
      + `on the server (${wall.toFixed(2)} s from upload to answer)`;
    // output names as `ocrkit infer --out` writes them: <name>, or <name>-p<N> for a page of a PDF/TIFF
    const paged = pages > 1 || /\.pdf$/i.test(file.name);
    const stem = paged ? `${file.name}-p${page}` : file.name;
    offerPdf(file, page, stem, reading);
    await offerDownloads(result, stem, reading);
    if (reading === latest) setStatus(`${what}: done`);
  } catch (err) {
    if (reading !== latest) return;
    showError(err.message);
    setStatus("");
  }
}

function choose(file) {
  if (!file) return;
  chosen = file;
  read(file, 1);
}

function cut() {
  // the request's confidence cut: 0 keeps the lines the service would drop as read unsure
  return $("keep-unsure").checked ? { min_confidence: 0 } : {};
}

async function copyText() {
  try {
    await navigator.clipboard.writeText(pageText);
    setStatus("Text copied");
  } catch {
    // no clipboard (a page not served over HTTPS or localhost): select the list for Ctrl+C instead
    getSelection().selectAllChildren($("lines"));
    setStatus("Text selected: press Ctrl+C to copy");
  }
}

function megabytes(bytes) {
  return `${Math.round(bytes / 2 ** 20)} MB`;
}

async function showModels() {
  try {
    const response = await fetch("v1/models");
    const m = await response.json();
    $("models").textContent = `${m.detector.release} + ${m.recognizer.release} (${m.backend})`;
    const limits = m.limits;
    $("limits").textContent = "Accepts PNG, JPEG, TIFF, WebP and other images, and PDFs: up to "
      + `${megabytes(limits.max_upload_bytes)}, ${limits.max_pages} pages (or one page chosen) and `
      + `${Math.round(limits.max_pixels / 1e6)} million pixels a page.`;
    if (m.min_confidence > 0) {
      $("cut").textContent = `below ${m.min_confidence}`;
      $("keep-choice").hidden = false;
    }
  } catch {
    $("models").textContent = "";
  }
}

function start() {
  const input = $("file");
  const drop = $("drop");
  input.addEventListener("change", () => {
    choose(input.files[0]);
    input.value = ""; // choosing the same file again reads it again
  });
  $("page").addEventListener("change", (e) => chosen && read(chosen, Number(e.target.value)));
  $("keep-unsure").addEventListener("change", () => chosen && read(chosen, Number($("page").value) || 1));
  $("copy").addEventListener("click", copyText);
  // a file dropped outside the drop zone must not replace the page in the browser
  for (const type of ["dragover", "drop"]) document.addEventListener(type, (e) => e.preventDefault());
  drop.addEventListener("dragover", () => drop.classList.add("over"));
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    drop.classList.remove("over");
    choose(e.dataTransfer.files[0]);
  });
  showModels();
}

start();
