"""From the windows' votes to a page's orientation (numpy: torch and ONNX decide alike)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ocrkit.decode.ctc import log_softmax
from ocrkit.hub.model_folder import OrientationSpec
from ocrkit.images.frame import ANGLES
from ocrkit.orientation.patches import gray_page, page_windows, to_input
from ocrkit.pages.document import Orientation


def decide(logits: np.ndarray, min_confidence: float, axis_confidence: float) -> Orientation:
    """(windows, 4) logits → the page's orientation: the windows' log-probabilities summed (independent
    votes). The likeliest turn is undone when its probability reaches `min_confidence` (below 1); when the
    axis (the turn or the one opposite) reaches `axis_confidence`, it is undone for the page's lines to
    confirm or turn round (method "lines", ocrkit.pipeline); else the page is read as sent."""
    votes = log_softmax(log_softmax(logits.astype(np.float64)).sum(0))
    probs = np.exp(votes)
    best = int(probs.argmax())
    angle, confidence = ANGLES[best], float(probs[best])
    if min_confidence < 1.0 and confidence >= min_confidence:
        return Orientation(angle, confidence, angle, method="classifier")
    if confidence + float(probs[(best + 2) % 4]) >= axis_confidence:
        return Orientation(angle, confidence, angle, method="lines")
    return Orientation(angle, confidence, 0, method="unsure")


def told(angle: int) -> Orientation:
    """The orientation a caller states (`--orientation 90`): undone as given, nothing classified."""
    if angle not in ANGLES:
        raise ValueError(f"orientation must be one of {', '.join(map(str, ANGLES))}, got {angle}")
    return Orientation(angle, 1.0, angle, method="told")


def classify(
    image: np.ndarray, spec: OrientationSpec, logits: Callable[[np.ndarray], np.ndarray]
) -> Orientation:
    """A page's orientation: its windows (ocrkit.orientation.patches) read by `logits` (torch or ONNX,
    (n, 1, s, s) float32 → (n, 4)), their votes decided as `decide` does."""
    windows = page_windows(gray_page(image, spec.page_side), spec.window, spec.windows)
    return decide(logits(to_input(windows)), spec.min_confidence, spec.axis_confidence)
