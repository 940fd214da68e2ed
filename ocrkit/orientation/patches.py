"""The windows of a page the orientation classifier reads (numpy and OpenCV: the ONNX path uses it too).

A page scaled to a fixed long side is too small as a whole for a small network to see which way its
letters stand (a book page's lines come out a few pixels tall), while a window of a few lines at that
scale shows the glyphs: the page is scaled so its long side is `page_side`, cut into square windows of
`size` on a grid, and the `count` windows holding most letters are read; their votes are averaged.
Letters are counted as small ink components: ranked by ink alone, the windows of a book scan were the
edges of the dark scanner bed, the ruler's upright lettering and the woodcuts, and upright pages were
turned sideways (docs/models/orientation/training-log.md). Blank paper says nothing and a picture
(mostly ink) little, so windows inked over more than half are skipped.
"""

from __future__ import annotations

import cv2
import numpy as np

from ocrkit.images.preprocess import to_rgb_uint8

MAX_INK = 0.5  # windows inked over more than this share are pictures or dark borders, not print
MIN_LETTER_PX = 6  # ink components smaller than this are specks and noise
LETTER_SHARE = 3  # a letter is at most a third of a window high and wide


def to_gray(image: np.ndarray) -> np.ndarray:
    """The page in gray at its own size (a gray uint8 page as it is): made once per page, it serves the
    classifier and the skew estimate both."""
    if image.ndim == 2 and image.dtype == np.uint8:
        return np.ascontiguousarray(image)
    return cv2.cvtColor(to_rgb_uint8(image), cv2.COLOR_RGB2GRAY)


def gray_page(image: np.ndarray, page_side: int) -> np.ndarray:
    """The page (RGB or gray) in gray, scaled (down or up) so its long side is `page_side`."""
    gray = to_gray(image)
    scale = page_side / max(gray.shape)
    size = (max(1, round(gray.shape[1] * scale)), max(1, round(gray.shape[0] * scale)))
    return cv2.resize(gray, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)


def ink(gray: np.ndarray) -> np.ndarray:
    """Print as 1 in a uint8 mask (what OpenCV's counting and turning take as it is): Otsu's threshold,
    the smaller side taken as ink (dark on light or light on dark)."""
    _, mask = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    if 2 * cv2.countNonZero(mask) > mask.size:
        mask ^= 1
    return mask


def page_windows(gray: np.ndarray, size: int, count: int) -> np.ndarray:
    """(count, size, size) uint8 windows of a gray page holding most print (padded with paper where the
    page is smaller than a window), on a grid of half-window steps, at most one per grid cell pair so
    they spread over the page; fewer when the page has fewer inked windows."""
    page = _padded(gray, size)
    mask = ink(page)
    step = size // 2
    ys = np.arange(0, page.shape[0] - size + 1, step)
    xs = np.arange(0, page.shape[1] - size + 1, step)
    share = _window_sums(mask, ys, xs, size) / (size * size)
    letters = _letters_per_window(mask, size, len(ys), len(xs))
    # most letters first; ink share (below 1) orders windows with as many, and pages with none
    rank = np.where((share > 0) & (share <= MAX_INK), letters + share, -1.0)
    order = np.argsort(-rank, axis=None)
    taken: list[tuple[int, int]] = []
    for flat in order:
        i, j = divmod(int(flat), len(xs))
        if rank[i, j] < 0 or len(taken) == count:
            break
        if all(abs(i - a) > 1 or abs(j - b) > 1 for a, b in taken):  # no two windows overlap
            taken.append((i, j))
    return np.stack(
        [page[ys[i] : ys[i] + size, xs[j] : xs[j] + size] for i, j in taken] or [page[:size, :size]]
    )


def _letters_per_window(mask: np.ndarray, size: int, rows: int, cols: int) -> np.ndarray:
    """(rows, cols) counts of letter-sized ink components (MIN_LETTER_PX up to a LETTER_SHARE of a
    window high and wide) centred in each grid window: counted per half-window cell, then four cells
    summed, as windows are two cells wide on a grid of one-cell steps."""
    _, _, stats, centres = cv2.connectedComponentsWithStats(mask, connectivity=8)
    width, height = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    small = (stats[1:, cv2.CC_STAT_AREA] >= MIN_LETTER_PX) & (width <= size // LETTER_SHARE)
    small &= height <= size // LETTER_SHARE
    step = size // 2
    cell_rows, cell_cols = -(-mask.shape[0] // step), -(-mask.shape[1] // step)
    at = (np.rint(centres[1:][small]) // step).astype(int)
    cells = np.bincount(
        np.minimum(at[:, 1], cell_rows - 1) * cell_cols + np.minimum(at[:, 0], cell_cols - 1),
        minlength=cell_rows * cell_cols,
    ).reshape(cell_rows, cell_cols)
    windows = cells[:-1, :-1] + cells[1:, :-1] + cells[:-1, 1:] + cells[1:, 1:]
    return windows[:rows, :cols].astype(np.float64)


def _window_sums(values: np.ndarray, ys: np.ndarray, xs: np.ndarray, size: int) -> np.ndarray:
    """Sum of `values` in every size × size window whose top-left corner is (ys[i], xs[j])."""
    total = cv2.integral(values)
    return (
        total[ys[:, None] + size, xs[None, :] + size]
        - total[ys[:, None], xs[None, :] + size]
        - total[ys[:, None] + size, xs[None, :]]
        + total[ys[:, None], xs[None, :]]
    )


def _padded(gray: np.ndarray, size: int) -> np.ndarray:
    """The page grown to at least one window with its own paper colour (its median)."""
    h, w = gray.shape
    if h >= size and w >= size:
        return gray
    out = np.full((max(h, size), max(w, size)), int(np.median(gray)), np.uint8)
    out[:h, :w] = gray
    return out


def to_input(windows: np.ndarray) -> np.ndarray:
    """(n, size, size) uint8 windows → the classifier's (n, 1, size, size) float32 input in [-1, 1]."""
    return (windows.astype(np.float32)[:, None] / 127.5) - 1.0
