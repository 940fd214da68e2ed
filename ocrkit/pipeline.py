"""OCR: detector + recognizer → Page, for one image, a file, or many files."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ocrkit import zoo
from ocrkit.document import Line, Page
from ocrkit.errors import InputError, OcrkitError
from ocrkit.inputs import collect_inputs
from ocrkit.io import PageSource, load_page
from ocrkit.line_crops import crop_lines
from ocrkit.reading_order import reading_order


class OCR:
    """Find the text lines on a page and read them.

    >>> ocr = OCR()                       # the shipped default models (ocrkit.zoo)
    >>> page = ocr.read("page.png")
    >>> page.text, page.lines[0].bbox
    """

    def __init__(
        self,
        det_model: str | Path | None = None,
        rec_model: str | Path | None = None,
        backend: str = "torch",
        device: str = "cpu",
        batch_size: int = 16,
        threads: int | None = None,
        decoding: str | None = None,
    ) -> None:
        """`decoding` (attention | ctc | joint) overrides the recognizer folder's own choice."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}")
        det_dir, rec_dir = zoo.resolve(det_model, "detector"), zoo.resolve(rec_model, "recognizer")
        if backend == "onnx":  # the shipped models are torch folders: use (or make once) their export
            det_dir, rec_dir = zoo.onnx_folder(det_dir, "detector"), zoo.onnx_folder(rec_dir, "recognizer")
        self.batch_size = batch_size
        if backend == "torch":
            import torch

            if threads:
                torch.set_num_threads(threads)
            from ocrkit.detection import load_detector
            from ocrkit.recognition import load_recognizer

            self.detector = load_detector(det_dir, device=device)
            self.recognizer = load_recognizer(rec_dir, device=device, decoding=decoding)
        elif backend == "onnx":
            from ocrkit.runtime import load_onnx_models

            self.detector, self.recognizer = load_onnx_models(det_dir, rec_dir, threads, decoding=decoding)
        else:
            raise OcrkitError(f"unknown backend {backend!r} (torch | onnx)")

    def read_array(self, image: np.ndarray, name: str = "<array>", page: int = 1) -> Page:
        """One HxWx3 RGB uint8 page."""
        return self.read_arrays([image], [name], [page])[0]

    def read_arrays(
        self, images: Sequence[np.ndarray], names: Sequence[str], pages: Sequence[int] | None = None
    ) -> list[Page]:
        """Several pages at once: each is detected on its own, then the lines of all of them are read
        together, so same-shape batches fill up across pages (a receipt alone has few lines per shape).
        Boxes read as empty text are dropped.
        A page's `seconds` is its detection time plus its share (by line count) of the recognition time."""
        pages = pages if pages is not None else [1] * len(images)
        detected, det_seconds, crops = [], [], []
        for image in images:
            start = time.perf_counter()
            ((boxes, scores),) = self.detector.predict([image])
            order = reading_order(boxes)
            detected.append((boxes[order], scores[order]))
            crops.extend(crop_lines(image, boxes[order]))
            det_seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        texts = self.recognizer.recognize(crops, batch_size=self.batch_size) if crops else []
        rec_per_line = (time.perf_counter() - start) / max(len(crops), 1)
        out, first = [], 0
        for image, name, page, (boxes, scores), seconds in zip(
            images, names, pages, detected, det_seconds, strict=True
        ):
            results = texts[first : first + len(boxes)]
            first += len(boxes)
            h, w = image.shape[:2]
            seconds += rec_per_line * len(boxes)
            # a box read as nothing is a false detection (speck, rule, stamp): the recognizer is trained
            # to read such crops as "" (synthetic blank crops), so it is no text line of the page
            lines = [line for line in _lines(boxes, scores, results) if line.text.strip()]
            out.append(Page(image=name, page=page, width=w, height=h, seconds=seconds, lines=lines))
        return out

    def read_boxes(self, image: np.ndarray, boxes: np.ndarray, name: str = "<array>", page: int = 1) -> Page:
        """Read the given xyxy line boxes (page pixels) instead of detecting them — with ground-truth
        boxes this measures the recognizer's share of the page error apart from the detector's."""
        start = time.perf_counter()
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        boxes = boxes[reading_order(boxes)]
        crops = crop_lines(image, boxes)
        texts = self.recognizer.recognize(crops, batch_size=self.batch_size) if crops else []
        h, w = image.shape[:2]
        lines = _lines(boxes, np.ones(len(boxes)), texts)
        return Page(
            image=name, page=page, width=w, height=h, seconds=time.perf_counter() - start, lines=lines
        )

    def read(self, source: str | Path | np.ndarray) -> Page:
        """Read one image (file path or HxWx3 RGB array); for a PDF, its first page."""
        if isinstance(source, np.ndarray):
            return self.read_array(source)
        first = collect_inputs([source]).items[0]
        if isinstance(first, InputError):
            raise first
        return self.read_source(first)

    def read_source(self, source: PageSource) -> Page:
        return self.read_array(load_page(source), name=source.label, page=source.page)

    def read_many(self, paths: Iterable[str | Path]) -> Iterator[Page | InputError]:
        """Every page of all images, TIFFs and PDFs under `paths`, in order; a bad input yields its
        InputError (naming the file) instead of stopping the batch."""
        for _, result in self.iter_results(paths):
            yield result

    def iter_results(
        self, paths: Iterable[str | Path], pages_per_batch: int = 4, unique_names: bool = False
    ) -> Iterator[tuple[PageSource | None, Page | InputError]]:
        """Like read_many, with the PageSource of each result (None for inputs that never became pages;
        its `stem` is the output name, see ocrkit.inputs). With `unique_names`, an input whose output
        name another already has is an InputError. Pages are read `pages_per_batch` at a time (see
        read_arrays); results keep the input order."""
        if pages_per_batch < 1:
            raise ValueError(f"pages_per_batch must be 1 or more, got {pages_per_batch}")
        pending: list[tuple[PageSource | None, np.ndarray | InputError]] = []
        for item in collect_inputs(paths, unique_names).items:
            if isinstance(item, InputError):
                pending.append((None, item))
            else:
                try:
                    pending.append((item, load_page(item)))
                except InputError as err:
                    pending.append((item, err))
            if sum(isinstance(x, np.ndarray) for _, x in pending) >= pages_per_batch:
                yield from self._flush(pending)
                pending = []
        yield from self._flush(pending)

    def _flush(
        self, pending: list[tuple[PageSource | None, np.ndarray | InputError]]
    ) -> Iterator[tuple[PageSource | None, Page | InputError]]:
        loaded = [(src, img) for src, img in pending if isinstance(img, np.ndarray)]
        images = [img for _, img in loaded]
        names = [src.label for src, _ in loaded]
        pages = iter(self.read_arrays(images, names, [src.page for src, _ in loaded]) if loaded else [])
        for src, item in pending:
            yield src, (next(pages) if isinstance(item, np.ndarray) else item)


def _lines(boxes: np.ndarray, det_scores: np.ndarray, results: Sequence[tuple[str, float]]) -> list[Line]:
    return [
        Line(
            bbox=[float(v) for v in box],
            text=text,
            det_score=float(ds),
            rec_score=float(rs),
            score=float(ds) * float(rs),
        )
        for box, ds, (text, rs) in zip(boxes, det_scores, results, strict=True)
    ]
