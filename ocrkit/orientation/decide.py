"""From the windows' votes to a page's orientation (numpy: torch and ONNX decide alike)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ocrkit.decode.ctc import log_softmax
from ocrkit.document import Orientation
from ocrkit.model_folder import OrientationSpec
from ocrkit.orientation.frame import ANGLES
from ocrkit.orientation.patches import gray_page, page_windows, to_input


def decide(logits: np.ndarray, min_confidence: float) -> Orientation:
    """(windows, 4) logits → the page's orientation: the windows' log-probabilities summed (independent
    votes), the likeliest turn undone when its probability reaches `min_confidence`, else none."""
    votes = log_softmax(log_softmax(logits.astype(np.float64)).sum(0))
    best = int(votes.argmax())
    confidence = float(np.exp(votes[best]))
    angle = ANGLES[best]
    return Orientation(angle, confidence, angle if confidence >= min_confidence else 0)


def told(angle: int) -> Orientation:
    """The orientation a caller states (`--orientation 90`): undone as given, nothing classified."""
    if angle not in ANGLES:
        raise ValueError(f"orientation must be one of {', '.join(map(str, ANGLES))}, got {angle}")
    return Orientation(angle, 1.0, angle)


def classify(
    image: np.ndarray, spec: OrientationSpec, logits: Callable[[np.ndarray], np.ndarray]
) -> Orientation:
    """A page's orientation: its windows (ocrkit.orientation.patches) read by `logits` (torch or ONNX,
    (n, 1, s, s) float32 → (n, 4)), their votes decided as `decide` does."""
    windows = page_windows(gray_page(image, spec.page_side), spec.window, spec.windows)
    return decide(logits(to_input(windows)), spec.min_confidence)
