"""OCR: detector + recognizer → Page, for one page, or for many files read in batches.

Every front end reads through here — `ocrkit infer` (with or without Ray), `ocrkit serve`, the library —
so batching pages together and telling which page of a failed batch caused the failure are done once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ocrkit.hub import zoo
from ocrkit.hub.model_folder import read_spec
from ocrkit.images import boxes as B
from ocrkit.images.box_ends import grow_to_ink
from ocrkit.images.frame import ANGLES, boxes_to_sent, points_to_sent, upright
from ocrkit.images.inputs import collect_inputs
from ocrkit.images.io import PageSource, load_page
from ocrkit.images.line_crops import crop_lines, crop_windows
from ocrkit.images.line_preprocess import cut_to_its_line
from ocrkit.images.preprocess import to_rgb_uint8
from ocrkit.images.stray_ink import stray_print
from ocrkit.orientation.decide import told
from ocrkit.orientation.lines import (
    KEEP,
    READ_BOTH,
    TURN,
    VOTE,
    lines_direction,
    reads_upright,
    sure_characters_per_line,
    vote_to_turn,
    widest,
)
from ocrkit.orientation.patches import to_gray
from ocrkit.orientation.skew import MIN_SKEW, STEEP_SKEW, corners_back, page_skew, straighten_to_print
from ocrkit.pages.document import Line, Orientation, Page
from ocrkit.pages.not_text import is_text
from ocrkit.pages.reading_order import reading_order
from ocrkit.pages.words import PlacedText, place_words
from ocrkit.util.errors import InputError, OcrkitError

BACKENDS = ("auto", "torch", "onnx")
BACKEND = "torch"  # the library's default: the same results unless asked otherwise
COMMAND_BACKEND = "auto"  # the commands': onnxruntime where the models can go through it (zoo.auto_backend)
DEVICE = "cpu"
BATCH_SIZE = 16  # line crops per recognizer batch
PAGES_PER_BATCH = 4  # pages whose lines are recognised together in read_many
STRAY_SURE = 0.9  # print no box holds is kept as a line where read as text at least this sure


class LineDetector(Protocol):
    """What the torch detector and its ONNX export both offer."""

    def predict(self, images: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]: ...


class PageOrienter(Protocol):
    """What the torch orientation classifier and its ONNX export both offer."""

    def classify(self, image: np.ndarray) -> Orientation: ...


class LineReader(Protocol):
    """What the torch recognizer and its ONNX export both offer."""

    def read_placed(
        self, crops: list[np.ndarray], batch_size: int = ..., trim_margins: bool | None = ...
    ) -> list[PlacedText]: ...

    def line_confidences(self, crops: list[np.ndarray]) -> list[float]: ...

    def recognize(self, crops: list[np.ndarray]) -> list[tuple[str, float]]: ...


class OCR:
    """Find the text lines on a page and read them.

    >>> ocr = OCR()                       # the shipped default models (ocrkit.hub.zoo)
    >>> page = ocr.read("page.png")
    >>> page.text, page.lines[0].bbox
    """

    def __init__(
        self,
        det_model: str | Path | None = None,
        rec_model: str | Path | None = None,
        backend: str = BACKEND,
        device: str = DEVICE,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
        decoding: str | None = None,
        min_confidence: float | None = None,
        orientation: str | int = "auto",
        orientation_model: str | Path | None = None,
    ) -> None:
        """`decoding` (attention | ctc | joint) overrides the recognizer folder's own choice, and
        `min_confidence` its `min_confidence` (0: keep every line read). `orientation`: "auto" classifies
        how each page was sent (turned 0/90/180/270 degrees clockwise) and reads it upright; an angle
        says how every page was sent (0: read as sent, nothing classified). `backend`: torch, onnx
        (onnxruntime: exports, and the shipped models exported once into the cache) or auto (onnx where
        every folder can go through it, see zoo.auto_backend); `self.backend` is the one chosen."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}")
        if min_confidence is not None and not 0.0 <= min_confidence < 1.0:
            raise ValueError(f"min_confidence must be in [0, 1), got {min_confidence}")
        if backend not in BACKENDS:
            raise OcrkitError(f"unknown backend {backend!r} ({' | '.join(BACKENDS)})")
        det_dir, rec_dir = zoo.resolve(det_model, "detector"), zoo.resolve(rec_model, "recognizer")
        self.orientation = check_orientation(orientation)
        orient_dir = zoo.resolve(orientation_model, "orientation") if self.orientation == "auto" else None
        if backend == "auto":
            folders = {"detector": det_dir, "recognizer": rec_dir}
            backend = zoo.auto_backend(folders | ({"orientation": orient_dir} if orient_dir else {}), device)
        self.backend = backend
        self.batch_size = batch_size
        rec_spec = read_spec(rec_dir, "recognizer")
        if min_confidence is None:
            min_confidence = rec_spec.min_confidence or 0.0
        self.min_confidence = min_confidence
        self.trim_crowded = rec_spec.trim_crowded
        self.grow_cut_ends = rec_spec.grow_cut_ends
        self.read_stray_print = rec_spec.read_stray_print
        self.detector: LineDetector
        self.recognizer: LineReader
        if backend == "torch":
            import torch

            if threads:
                torch.set_num_threads(threads)
            from ocrkit.detection import load_detector
            from ocrkit.recognition import load_recognizer

            self.detector = load_detector(det_dir, device=device)
            self.recognizer = load_recognizer(rec_dir, device=device, decoding=decoding)
        else:  # the shipped models are torch folders: use (or make once) their export
            from ocrkit.export.cache import onnx_folder
            from ocrkit.runtime import load_onnx_models

            det_dir, rec_dir = onnx_folder(det_dir, "detector"), onnx_folder(rec_dir, "recognizer")
            self.detector, self.recognizer = load_onnx_models(det_dir, rec_dir, threads, decoding=decoding)
        self.orienter: PageOrienter | None = None
        if orient_dir is not None:
            self.orienter = load_orienter(orient_dir, backend)

    def detect(self, image: np.ndarray, name: str = "<array>", page: int = 1) -> Page:
        """The text lines of one HxWx3 RGB page as given (no orientation), in reading order, without
        reading them (no text)."""
        return detect_page(self.detector, image, name, page)

    def orient(self, image: np.ndarray) -> Orientation | None:
        """How a page was sent: classified ("auto"), as told (an angle), or None for 0."""
        if self.orienter is not None:
            return self.orienter.classify(image)
        return told(self.orientation) if self.orientation else None

    def read(
        self,
        image: str | Path | np.ndarray,
        name: str | None = None,
        page: int = 1,
        min_confidence: float | None = None,
    ) -> Page:
        """One page: an HxWx3 RGB uint8 array, or an image or PDF file (its `page`-th page). `name` is the
        Page's `image` field (default: the file's path, or "<array>"); `min_confidence` replaces the
        pipeline's for this page (0 keeps every line read as text: a service's per-request choice)."""
        if min_confidence is not None and not 0.0 <= min_confidence < 1.0:
            raise ValueError(f"min_confidence must be in [0, 1), got {min_confidence}")
        if not isinstance(image, np.ndarray):
            source = _page_of(Path(image), page)
            image, name = load_page(source), name or source.label
        return self._read_pages([image], [name or "<array>"], [page], min_confidence)[0]

    def read_many(
        self, inputs: Iterable[str | Path | PageSource], pages_per_batch: int = PAGES_PER_BATCH
    ) -> Iterator[Page | InputError]:
        """Every page of `inputs`, in order: a path stands for every page of every image, TIFF and PDF
        at or under it (named as in ocrkit.images.inputs), a PageSource for that one page.

        Pages are read `pages_per_batch` at a time with their lines recognised together (see
        `_read_pages`). A bad input, or a page that cannot be read, yields an InputError naming it in
        its place and the batch goes on; when a group of pages fails, its pages are read again one by one
        so the error lands on the page that caused it."""
        if pages_per_batch < 1:
            raise ValueError(f"pages_per_batch must be 1 or more, got {pages_per_batch}")
        pending: list[tuple[PageSource, np.ndarray] | InputError] = []
        for item in _page_sources(inputs):
            if isinstance(item, PageSource):
                try:
                    item = (item, load_page(item))
                except InputError as err:
                    item = err
            pending.append(item)
            if sum(isinstance(x, tuple) for x in pending) == pages_per_batch:
                yield from self._read_group(pending)
                pending = []
        yield from self._read_group(pending)

    def read_boxes(self, image: np.ndarray, boxes: np.ndarray, name: str = "<array>", page: int = 1) -> Page:
        """Read the given xyxy line boxes (page pixels) instead of detecting them — with ground-truth
        boxes this measures the recognizer's share of the page error apart from the detector's."""
        start = time.perf_counter()
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        boxes = boxes[reading_order(boxes)]
        h, w = image.shape[:2]
        found = Page(image=name, page=page, width=w, height=h, lines=_lines(boxes, np.ones(len(boxes))))
        self._read_lines([image], [found])
        if self.trim_crowded:  # as the pipeline reads its own boxes
            self._read_crowded_cut([image], [found])
        found.seconds = time.perf_counter() - start
        return found

    def _read_group(
        self, pending: list[tuple[PageSource, np.ndarray] | InputError]
    ) -> Iterator[Page | InputError]:
        """The loaded pages of `pending` read together, or one by one if that fails; errors pass through."""
        loaded = [x for x in pending if isinstance(x, tuple)]
        pages: list[Page] | list[Page | InputError] | None = None
        if len(loaded) > 1:
            try:
                pages = self._read_pages(
                    [img for _, img in loaded], [s.label for s, _ in loaded], [s.page for s, _ in loaded]
                )
            except Exception:  # noqa: BLE001 - read again page by page below, where the failure is named
                pass
        if pages is None:
            pages = [self._read_alone(source, image) for source, image in loaded]
        results = iter(pages)
        for item in pending:
            yield next(results) if isinstance(item, tuple) else item

    def _read_alone(self, source: PageSource, image: np.ndarray) -> Page | InputError:
        try:
            return self._read_pages([image], [source.label], [source.page])[0]
        except Exception as exc:  # noqa: BLE001 - one page that cannot be read must not stop the batch
            where = f"{source.label} page {source.page}" if source.pages > 1 else source.label
            error = InputError(where, f"{exc.__class__.__name__}: {exc}")
            error.__cause__ = exc  # the traceback `--debug` shows
            return error

    def _read_pages(
        self,
        images: Sequence[np.ndarray],
        names: Sequence[str],
        pages: Sequence[int],
        min_confidence: float | None = None,
    ) -> list[Page]:
        """Several pages at once: each is detected on its own, then the lines of all of them are read
        together, so same-shape batches fill up across pages (a receipt alone has few lines per shape).
        Boxes whose reading is not text are dropped (ocrkit.pages.not_text: nothing, punctuation alone, a
        decoder loop): false detections (specks, rules, stamps), which the recognizer is trained to read
        as "" (synthetic blank crops). Lines read less sure than `min_confidence` are dropped only when
        the caller or the folder asks for it: a hard line is read unsure too.
        A page's `seconds` is its detection time plus its share (by line count) of the recognition time."""
        cut = self.min_confidence if min_confidence is None else min_confidence
        start = time.perf_counter()
        framed = [self._upright(image) for image in images]
        per_page = (time.perf_counter() - start) / max(len(images), 1)
        found = [
            self.detect(framing.image, name, page)
            for framing, name, page in zip(framed, names, pages, strict=True)
        ]
        # a page the classifier turned upside down is often upright (most pages are sent so, and the
        # classifier tells the axis far better than the direction): its widest lines, which settle its
        # direction, are read first, the rest only if it stays as it lies
        ahead = {
            i: widest(page.boxes())
            for i, (framing, page) in enumerate(zip(framed, found, strict=True))
            if _leans_upside_down(framing.orientation) and len(page.lines)
        }
        self._read_lines([framing.image for framing in framed], found, ahead)
        self._settle_unsure_axes(images, names, pages, framed, found)
        directions = {
            i: self._lines_direction(framing, page)
            for i, (framing, page) in enumerate(zip(framed, found, strict=True))
            if framing.orientation is not None and framing.orientation.method in ("lines", "reading")
        }
        staying = [i for i in ahead if directions[i] != TURN and len(ahead[i]) < len(found[i].lines)]
        if staying:
            rest = {k: _unread(found[i], ahead[i]) for k, i in enumerate(staying)}
            self._read_lines([framed[i].image for i in staying], [found[i] for i in staying], rest)
        turned_round = [i for i, direction in directions.items() if direction != KEEP]
        as_it_lay = {i: (replace(framed[i]), found[i]) for i in turned_round if directions[i] == READ_BOTH}
        for i in turned_round:
            found[i] = self._turn_round(framed[i], found[i])
        if turned_round:
            self._read_lines([framed[i].image for i in turned_round], [found[i] for i in turned_round])
        for i, (framing, page) in as_it_lay.items():  # read both ways up: the surer reading is kept
            if text_per_line(found[i]) <= text_per_line(page):
                page.seconds = found[i].seconds
                framed[i], found[i] = framing, page
        read = [framing.image for framing in framed]  # each page as read: upright, level
        # in gray once for both stages that look for print beside the boxes
        grays = [to_gray(image) for image in read] if self.grow_cut_ends or self.read_stray_print else []
        if self.grow_cut_ends:
            self._read_grown_ends(read, grays, found)
        if self.trim_crowded:
            self._read_crowded_cut(read, found)
        if self.read_stray_print:
            self._read_stray_print(read, grays, found)
        for page, sent, framing in zip(found, images, framed, strict=True):
            text = [line for line in page.lines if is_text(line.text)]
            page.not_text = [line for line in page.lines if not is_text(line.text)]
            page.lines = [line for line in text if line.rec_score >= cut]
            page.unsure = [line for line in text if line.rec_score < cut]
            page.seconds += per_page
            if framing.orientation is not None:
                to_sent_frame(page, framing, sent.shape[1], sent.shape[0])
        return found

    def _upright(self, image: np.ndarray) -> Framing:
        """The page as it is read: turned upright and, with `orientation="auto"`, straightened when its
        print is skewed by MIN_SKEW or more."""
        gray = to_gray(image) if self.orienter is not None else None  # the classifier's and the skew's
        orientation = self.orient(image if gray is None else gray)
        if orientation is None:
            return Framing(image, None)
        return self._framed(image, orientation, gray)

    def _framed(self, image: np.ndarray, orientation: Orientation, gray: np.ndarray | None = None) -> Framing:
        """The page turned as `orientation` says and, with a classifier, straightened (`gray`: the page
        as sent in gray, where it is already made)."""
        page = upright(image, orientation.turns)
        if self.orienter is None:
            return Framing(page, orientation, orientation.turns)
        gray_page = upright(to_gray(image) if gray is None else gray, orientation.turns)
        skew = page_skew(gray_page)
        if abs(skew) < MIN_SKEW:
            return Framing(page, orientation, orientation.turns)
        straight, back = straighten_to_print(page, skew, gray_page)
        return Framing(straight, replace(orientation, skew=round(skew, 2)), orientation.turns, back)

    def _settle_unsure_axes(
        self,
        images: Sequence[np.ndarray],
        names: Sequence[str],
        pages: Sequence[int],
        framed: list[Framing],
        found: list[Page],
    ) -> None:
        """Pages whose axis is in doubt, already read once, read again turned a quarter turn: the
        reading with more surely read characters per line (ocrkit.orientation.lines) keeps its axis,
        whose direction the lines' check then settles (method "reading"). In doubt: pages the classifier
        is unsure of (read as sent first; with no text either way they stay so, "unsure") and pages
        skewed STEEP_SKEW or more, whose axis the classifier can be sure of and wrong."""
        in_doubt = [
            i
            for i, framing in enumerate(framed)
            if framing.orientation is not None
            and (
                framing.orientation.method == "unsure"
                or (framing.orientation.method == "lines" and abs(framing.orientation.skew) >= STEEP_SKEW)
            )
        ]
        if not in_doubt:
            return
        across = [self._framed(images[i], across_turn(framed[i].orientation)) for i in in_doubt]
        again = [self.detect(f.image, names[i], pages[i]) for f, i in zip(across, in_doubt, strict=True)]
        self._read_lines([f.image for f in across], again)
        for i, framing, page in zip(in_doubt, across, again, strict=True):
            first, turned = text_per_line(found[i]), text_per_line(page)
            page.seconds += found[i].seconds  # both readings are the page's time, whichever is kept
            found[i].seconds = page.seconds
            if max(first, turned) == 0:
                continue
            if turned > first:
                framed[i], found[i] = framing, page
            framed[i].orientation = replace(framed[i].orientation, method="reading")

    def _lines_direction(self, framing: Framing, page: Page) -> str:
        """For a page whose lines' axis is known (from the classifier, or from reading it both ways
        across) but not their direction, already read as it lies: its widest lines read sure keep it
        upright; else they are read again as they are and turned half a turn (CTC confidence, and the
        decoder's score where those votes split: ocrkit.orientation.lines) and vote to turn it, keep it
        or read it both ways, a classifier sure of the direction it chose being overruled only by a
        clear vote."""
        boxes = page.boxes()
        if not len(boxes):
            return KEEP
        checked = widest(boxes)
        if reads_upright(np.array([page.lines[i].rec_score for i in checked])):
            return KEEP
        crops = crop_lines(framing.image, boxes[checked])
        orientation = framing.orientation
        # a classifier sure of the direction is overruled only by a clear vote where its turn was undone
        vote = vote_to_turn(orientation.confidence) if orientation.applied == orientation.angle else VOTE
        scores = [page.lines[i].rec_score for i in checked]
        recognizer = self.recognizer
        return lines_direction(crops, scores, recognizer.line_confidences, recognizer.recognize, vote)

    def _turn_round(self, framing: Framing, page: Page) -> Page:
        """The page turned half a turn and its lines found again (to be read again): lines found upside
        down are cut less well (on the development pages sent upside down, their text differed from the
        upright reading by CER 0.31, found again 0.08)."""
        framing.image = np.ascontiguousarray(framing.image[::-1, ::-1])
        framing.flipped = True
        framing.orientation = replace(framing.orientation, applied=(framing.orientation.applied + 180) % 360)
        again = self.detect(framing.image, page.image, page.page)
        again.seconds += page.seconds
        return again

    def _read_grown_ends(
        self, images: Sequence[np.ndarray], grays: Sequence[np.ndarray], found: list[Page]
    ) -> None:
        """The lines whose box ends inside their print (`grow_cut_ends`) read again from the box grown
        to where the print stops (ocrkit.images.box_ends), the grown box and its reading kept where it
        reads as text at least as surely as the first: a box grown into a marginal note, a drop capital
        or a verse number reads less sure. Boxes whose first reading is not text (specks, rules,
        ornaments) are not grown: grown over an ornament, one read as long, sure text. Done once each
        page is upright and read, so the orientation and the other lines are those of the reading
        without it."""
        start = time.perf_counter()
        # page, line, grown box, its window's left and top, the crop
        picked: list[tuple[Page, int, np.ndarray, int, int, np.ndarray]] = []
        for image, gray, page in zip(images, grays, found, strict=True):
            boxes = page.boxes()
            if not len(boxes):
                continue
            grown = grow_to_ink(gray, boxes)
            read_as_text = np.array([is_text(line.text) for line in page.lines])
            at = np.flatnonzero((grown != boxes).any(axis=1) & read_as_text)
            for i, (left, top, right, bottom) in zip(at, crop_windows(image.shape, grown[at]), strict=True):
                picked.append((page, int(i), grown[i], left, top, image[top:bottom, left:right]))
        if not picked:
            return
        readings = self.recognizer.read_placed([crop for *_, crop in picked], batch_size=self.batch_size)
        per_line = (time.perf_counter() - start) / len(picked)
        for (page, i, box, left, top, crop), placed in zip(picked, readings, strict=True):
            page.seconds += per_line
            _keep_if_surer(page.lines[i], placed, left, top, crop, box)

    def _read_crowded_cut(self, images: Sequence[np.ndarray], found: list[Page]) -> None:
        """The lines whose box overlaps another box of their page (`trim_crowded`) read again cut to
        their line (ocrkit.images.line_band: the neighbour's ink painted over, the line's rows kept),
        the cut reading kept where it reads as text at least as surely as the whole box did: a cut that
        kept the neighbour's line (two boxes overlapping by half a line) or little of its own reads less
        sure. A crop the cut leaves as it is (two of three crowded receipt lines) is not read again: it
        would read as it did. Done once each page is upright and read, so the orientation, the boxes and
        the other lines are those of the reading without it."""
        start = time.perf_counter()
        # page, line, window's left and top, the crop and the crop cut to its line
        picked: list[tuple[Page, int, int, int, np.ndarray, np.ndarray]] = []
        for image, page in zip(images, found, strict=True):
            boxes = page.boxes()
            at = np.flatnonzero(B.crowded(boxes))
            for i, (left, top, right, bottom) in zip(at, crop_windows(image.shape, boxes[at]), strict=True):
                crop = to_rgb_uint8(image[top:bottom, left:right])
                cut = cut_to_its_line(crop)
                if cut is not crop:  # a crop the cut leaves as it is would read as it did
                    picked.append((page, int(i), left, top, crop, cut))
        if not picked:
            return
        cuts = [cut for *_, cut in picked]  # cut here, so not again by a folder that trims every crop
        readings = self.recognizer.read_placed(cuts, batch_size=self.batch_size, trim_margins=False)
        per_line = (time.perf_counter() - start) / len(picked)
        for (page, i, left, top, crop, _), placed in zip(picked, readings, strict=True):
            page.seconds += per_line
            _keep_if_surer(page.lines[i], placed, left, top, crop)

    def _read_stray_print(
        self, images: Sequence[np.ndarray], grays: Sequence[np.ndarray], found: list[Page]
    ) -> None:
        """Print standing in a line's row that no box holds (`read_stray_print`; ocrkit.images.stray_ink:
        a receipt's quantity column, a tax code, a heading standing apart) read, and kept as a line of
        its own where it reads as text at least STRAY_SURE; specks, rules and stamps read as no text or
        unsure. Such a line has no detector score (`det_score` 0). Done last, once each page is upright
        and its own lines read, so nothing else depends on it."""
        start = time.perf_counter()
        # page, box, its window's left and top, the crop
        picked: list[tuple[Page, np.ndarray, int, int, np.ndarray]] = []
        for image, gray, page in zip(images, grays, found, strict=True):
            stray = stray_print(gray, page.boxes())
            for box, (left, top, right, bottom) in zip(stray, crop_windows(image.shape, stray), strict=True):
                picked.append((page, box, left, top, image[top:bottom, left:right]))
        if not picked:
            return
        readings = self.recognizer.read_placed([crop for *_, crop in picked], batch_size=self.batch_size)
        per_line = (time.perf_counter() - start) / len(picked)
        grown: dict[int, Page] = {}
        for (page, box, left, top, crop), placed in zip(picked, readings, strict=True):
            page.seconds += per_line
            if is_text(placed.text) and placed.score >= STRAY_SURE:
                bbox = [float(v) for v in box]
                words = place_words(placed, bbox, left, crop, top)
                page.lines.append(Line(bbox, placed.text, 0.0, 0.0, float(placed.score), words))
                grown[id(page)] = page
        for page in grown.values():
            page.lines = [page.lines[i] for i in reading_order(page.boxes())]

    def _read_lines(
        self,
        images: Sequence[np.ndarray],
        found: list[Page],
        only: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        """Recognise the lines of `found` (boxes on `images`) in one run, filling in text, scores and
        words (ocrkit.pages.words); `only`: for the pages it names (by index), the lines to read now."""
        picked = [
            np.arange(len(page.lines)) if only is None or i not in only else np.asarray(only[i])
            for i, page in enumerate(found)
        ]
        windows = [
            crop_windows(image.shape, page.boxes()[lines])
            for image, page, lines in zip(images, found, picked, strict=True)
        ]
        crops = [
            image[top:bottom, left:right]
            for image, page_windows in zip(images, windows, strict=True)
            for left, top, right, bottom in page_windows
        ]
        start = time.perf_counter()
        texts = iter(self.recognizer.read_placed(crops, batch_size=self.batch_size) if crops else [])
        per_line = (time.perf_counter() - start) / max(len(crops), 1)
        pixels = iter(crops)
        for page, lines, page_windows in zip(found, picked, windows, strict=True):
            page.seconds += per_line * len(lines)
            for i, window in zip(lines, page_windows, strict=True):  # texts: the lines of all pages
                line, placed = page.lines[int(i)], next(texts)
                line.text, line.rec_score = placed.text, float(placed.score)
                line.score = line.det_score * line.rec_score
                line.words = place_words(placed, line.bbox, window[0], next(pixels), window[1])


def _leans_upside_down(orientation: Orientation | None) -> bool:
    """Whether a page was turned half a turn for its lines to confirm (not read on both axes)."""
    return (
        orientation is not None
        and orientation.method == "lines"
        and orientation.applied == 180
        and abs(orientation.skew) < STEEP_SKEW
    )


def _unread(page: Page, read: np.ndarray) -> np.ndarray:
    """Indices of the page's lines not among `read`, in order."""
    return np.setdiff1d(np.arange(len(page.lines)), read)


def check_orientation(value: str | int) -> str | int:
    """`orientation` as given if it is "auto" or a quarter turn in degrees; ValueError otherwise."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value in ANGLES):
        return value
    raise ValueError(f"orientation must be auto or one of {', '.join(map(str, ANGLES))}, got {value!r}")


def load_orienter(folder: Path, backend: str) -> PageOrienter:
    """The orientation classifier of `folder` for the backend (the shipped one exported once for ONNX)."""
    if backend == "onnx":
        from ocrkit.export.cache import onnx_folder
        from ocrkit.runtime.orientation import OnnxOrientation

        return OnnxOrientation(onnx_folder(folder, "orientation"))
    from ocrkit.orientation.model import OrientationClassifier

    return OrientationClassifier.load(folder)


@dataclass
class Framing:
    """A page as it is read, and how to put what is found on it back on the page as sent."""

    image: np.ndarray  # turned upright, straightened, maybe turned round
    orientation: Orientation | None  # None: read as sent
    turns: int = 0  # quarter turns undone by `upright`
    back: np.ndarray | None = None  # affine map from the straightened page to the upright one
    flipped: bool = False  # turned half a turn after that, its lines reading better so


def to_sent_frame(page: Page, framing: Framing, width: int, height: int) -> None:
    """A page read as `framing` says, its boxes (lines and words) put back on the page as sent
    (`width` × `height`); a straightened line also gets its turned box as a polygon, `bbox` bounding it."""
    page.orientation = framing.orientation
    page.width, page.height = width, height
    read_h, read_w = framing.image.shape[:2]

    def placed(box: list[float]) -> tuple[list[float], np.ndarray | None]:
        x0, y0, x1, y1 = box
        if framing.flipped:
            x0, y0, x1, y1 = read_w - x1, read_h - y1, read_w - x0, read_h - y0
        if framing.back is None:
            return boxes_to_sent(np.array([[x0, y0, x1, y1]]), framing.turns, width, height)[0].tolist(), None
        corners = corners_back(np.array([[x0, y0, x1, y1]]), framing.back)[0]
        corners = np.clip(points_to_sent(corners, framing.turns, width, height), 0, [width, height])
        return [*corners.min(0).tolist(), *corners.max(0).tolist()], corners

    for line in page.lines + page.unsure + page.not_text:
        line.bbox, corners = placed(line.bbox)
        if corners is not None:
            line.polygon = corners.tolist()
        for word in line.words:
            word.bbox = placed(word.bbox)[0]


def across_turn(orientation: Orientation) -> Orientation:
    """A page's second reading, a quarter turn from its first: for an unsure page (read as sent) the
    classifier's way if its likeliest turn lies across (90 or 270), so that the lines' check starts
    from the direction it favoured; for a page read on the classifier's axis, a quarter turn more."""
    if orientation.method != "unsure":
        return replace(orientation, applied=(orientation.applied + 90) % 360, skew=0.0)
    return replace(orientation, applied=orientation.angle if orientation.angle % 180 else 90, skew=0.0)


def _keep_if_surer(
    line: Line, placed: PlacedText, left: int, top: int, crop: np.ndarray, box: np.ndarray | None = None
) -> None:
    """A second reading of `line` (from `crop`, whose top left sits at `left`, `top` on the page; read in
    `box` where that is not the line's own) replaces the first where it is text and at least as sure."""
    if not is_text(placed.text) or placed.score < line.rec_score:
        return
    if box is not None:
        line.bbox = [float(v) for v in box]
    line.text, line.rec_score = placed.text, float(placed.score)
    line.score = line.det_score * line.rec_score
    line.words = place_words(placed, line.bbox, left, crop, top)


def text_per_line(page: Page) -> float:
    """The surely read characters per detected line of a page, a line read as no text counting as a line
    with none: read on the wrong axis, a page's boxes are cut print that reads as nothing, and leaving
    them out of the count made such a reading look as sure as the right one (a faint receipt skewed 10°
    was turned sideways in 2 of 480 validation readings until they counted)."""
    texts = [line.text if is_text(line.text) else "" for line in page.lines]
    return sure_characters_per_line(texts, [line.rec_score for line in page.lines])


def detect_page(detector: LineDetector, image: np.ndarray, name: str = "<array>", page: int = 1) -> Page:
    """The text lines `detector` finds on one page, in reading order, as a Page without text."""
    start = time.perf_counter()
    ((boxes, scores),) = detector.predict([image])
    order = reading_order(boxes)
    h, w = image.shape[:2]
    lines = _lines(boxes[order], scores[order])
    return Page(image=name, page=page, width=w, height=h, seconds=time.perf_counter() - start, lines=lines)


def _lines(boxes: np.ndarray, det_scores: np.ndarray) -> list[Line]:
    return [
        Line(bbox=[float(v) for v in box], det_score=float(s), score=float(s))
        for box, s in zip(boxes, det_scores, strict=True)
    ]


def _page_sources(inputs: Iterable[str | Path | PageSource]) -> Iterator[PageSource | InputError]:
    for item in inputs:
        if isinstance(item, PageSource):
            yield item
        else:
            yield from collect_inputs([item], unique_names=False).items


def _page_of(path: Path, page: int) -> PageSource:
    """Page `page` of the image or PDF file at `path`, or the InputError that says why there is none."""
    if path.is_dir():
        raise InputError(path, "is a folder; read_many reads folders")
    for item in collect_inputs([path]).items:
        if isinstance(item, InputError):
            raise item
        if item.page == page:
            return item
    raise InputError(path, f"has no page {page}")
