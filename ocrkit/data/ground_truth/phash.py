"""Perceptual hashes of page images, so a resized or re-encoded copy of an evaluation page is recognised.

A sha256 only matches byte-identical files; a page saved again as JPEG, scaled, or converted to gray has
another sha256 but the same picture. The hash here is a DCT hash (pHash) of 256 bits: the grayscale image
shrunk to 128 × 128, its 2-D DCT, and one bit per coefficient of the 16 × 16 lowest frequencies (the mean
brightness left out) saying whether it lies above their median. Re-encoding and resizing barely move those
frequencies. The common 64-bit pHash (8 × 8 frequencies) sees only the layout of a page: distinct pages
of one ruled register came 2 bits apart, as close as copies; with 256 bits they stayed >= 20 apart while
copies (a quarter of the size, JPEG quality 30) stayed <= 8 (docs/training.md).

A copy may also sit in another frame: a white border added, a deskewing turn of a degree, a few per cent
of margin cut off, the paper brightened. Those move the hash 14-126 bits, so an image is checked in the
frames that would undo them too (`frame_hashes`: its uniform border trimmed, turned back by up to 2
degrees, its margins grown back), and a reserved page is listed with the hashes of the copies that
cropping, deskewing and brightening make of it (`reserve_hashes`), since a cut margin or clipped paper
cannot be restored from the copy. Against the evaluation pages listed that way, 3 251 distinct training
pages came no nearer than 20 bits in any frame, so the 12-bit threshold refuses none of them
(docs/training.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np

from ocrkit.images.frame import skewed
from ocrkit.util.errors import InputError

PREFIX = "dct256:"  # names the hash kind in the reserved list, so another kind can be added beside it
SIDE, FREQS = 128, 16
NEAR_BITS = 12  # at most this many differing bits: the same picture
WORK_SIDE = 512  # frames are tried on the picture shrunk to this long side: the hash sees 128 x 128
TURNS = (-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0)  # degrees a deskewed copy may have been turned
MARGINS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08)  # share of each side a cropped copy may have lost
BORDER_TOLERANCE = 6  # grey levels: a padded border is one colour, a scanned margin is not
# copies of a reserved page listed beside it: its margins cut by 1-8 % on each side, its paper brightened
# by 10-50 % (clipped to white), turned by up to 2 degrees on its own canvas with white corners
RESERVE_TRIMS = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08)
RESERVE_GAINS = (1.1, 1.2, 1.3, 1.4, 1.5)
RESERVE_TURNS = TURNS
_VALUE = re.compile(rf"{PREFIX}([0-9a-f]{{{FREQS * FREQS // 4}}})")


def phash(image: np.ndarray) -> bytes:
    """The 256-bit DCT hash (32 bytes) of an RGB or grayscale uint8 image."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    small = cv2.resize(gray, (SIDE, SIDE), interpolation=cv2.INTER_AREA).astype(np.float32)
    low = cv2.dct(small)[:FREQS, :FREQS].flatten()
    bits = low > np.median(low[1:])
    bits[0] = False  # the mean brightness says nothing about the picture
    return np.packbits(bits).tobytes()


def frame_hashes(image: np.ndarray) -> list[bytes]:
    """The hash of a picture and of the frames that would undo what copies of a page are given: its
    uniform border trimmed (an added border), then that turned back by each of `TURNS` (a deskewing
    turn) or grown back by each of `MARGINS` on every side with its edge pixels (a cropped margin)."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    trimmed = _trim_uniform_border(_shrunk(gray))
    frames = [trimmed] + [skewed(trimmed, angle) for angle in TURNS]
    frames += [_grown(trimmed, margin / (1 - 2 * margin)) for margin in MARGINS]
    return [phash(image)] + [phash(frame) for frame in frames]


def reserve_hashes(image: np.ndarray) -> list[bytes]:
    """The hash of a reserved picture, then those of the copies cropping, deskewing and brightening steps
    make of it (`RESERVE_TRIMS`, `RESERVE_GAINS`, `RESERVE_TURNS`) and of the picture with its uniform
    border trimmed as `frame_hashes` trims a copy's, each once: a copy made so is within a few bits of
    one of them, or of one of them in the frames `frame_hashes` tries."""
    small = _shrunk(image)  # in colour: brightening clips each channel, as an editor's does
    h, w = small.shape[:2]
    copies = [small[round(h * m) : h - round(h * m), round(w * m) : w - round(w * m)] for m in RESERVE_TRIMS]
    copies += [np.clip(small.astype(np.float32) * gain, 0, 255).astype(np.uint8) for gain in RESERVE_GAINS]
    copies += [_turned_white(small, angle) for angle in RESERVE_TURNS]
    # a page on blank paper loses its own blank margin with an added border when `frame_hashes` trims it
    gray = small if small.ndim == 2 else cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    copies.append(_trim_uniform_border(gray))
    return list(dict.fromkeys([phash(image)] + [phash(copy) for copy in copies]))


def _shrunk(image: np.ndarray) -> np.ndarray:
    """The picture shrunk to WORK_SIDE on its long side if larger."""
    h, w = image.shape[:2]
    scale = WORK_SIDE / max(h, w)
    if scale >= 1:
        return image
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _turned_white(image: np.ndarray, angle: float) -> np.ndarray:
    """The picture turned `angle` degrees about its centre on its own canvas, the corners white."""
    h, w = image.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    return cv2.warpAffine(image, turn, (w, h), flags=cv2.INTER_LINEAR, borderValue=(255, 255, 255))


def _trim_uniform_border(gray: np.ndarray) -> np.ndarray:
    """The picture without the rows and columns at its edges that are all the colour of its border."""
    edge = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    differs = np.abs(gray.astype(np.int16) - int(np.median(edge))) > BORDER_TOLERANCE
    rows, cols = np.flatnonzero(differs.mean(axis=1) > 0.002), np.flatnonzero(differs.mean(axis=0) > 0.002)
    if len(rows) < 8 or len(cols) < 8:  # nothing but border: keep it whole
        return gray
    return gray[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _grown(gray: np.ndarray, share: float) -> np.ndarray:
    h, w = gray.shape
    dy, dx = round(h * share), round(w * share)
    return cv2.copyMakeBorder(gray, dy, dy, dx, dx, cv2.BORDER_REPLICATE)


def phash_text(value: bytes) -> str:
    """The hash as the reserved list writes it: `dct256:` and 64 hex digits."""
    return PREFIX + value.hex()


def phashes_text(values: list[bytes]) -> str:
    """Hashes as one field of the reserved list: space-separated, the picture's own first."""
    return " ".join(phash_text(value) for value in values)


def distance(a: bytes, b: bytes) -> int:
    """Differing bits of two hashes."""
    return int(np.unpackbits(np.bitwise_xor(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8))).sum())


class NearDuplicates:
    """Perceptual hashes that answer "is this picture one of them, give or take a re-encoding"."""

    def __init__(self, hashes: list[bytes] | None = None, max_bits: int = NEAR_BITS) -> None:
        unique = sorted(set(hashes or []))
        self.hashes = np.frombuffer(b"".join(unique), np.uint8).reshape(len(unique), FREQS * FREQS // 8)
        self.max_bits = max_bits

    def __len__(self) -> int:
        return len(self.hashes)

    def nearest(self, value: bytes) -> int | None:
        """Bits to the closest listed hash (None when the list is empty)."""
        if not len(self.hashes):
            return None
        xor = np.bitwise_xor(self.hashes, np.frombuffer(value, np.uint8))
        return int(np.unpackbits(xor, axis=1).sum(axis=1).min())

    def matches_picture(self, image: np.ndarray) -> bool:
        """Whether an image is a listed picture in any of the frames of `frame_hashes`."""
        return bool(len(self.hashes)) and any(self.matches(value) for value in frame_hashes(image))

    def matches(self, value: bytes) -> bool:
        if not informative(value):  # a blank or flat image: every such image hashes alike
            return False
        nearest = self.nearest(value)
        return nearest is not None and nearest <= self.max_bits


def informative(value: bytes) -> bool:
    """Whether a hash describes a picture: a flat image (blank paper, one grey) has no frequency above
    the median, so its hash is (nearly) all zeros and would match every other flat image."""
    return int(np.unpackbits(np.frombuffer(value, np.uint8)).sum()) >= FREQS * FREQS // 4


def read_reserved_phashes(path: str | Path | None) -> NearDuplicates:
    """The perceptual hashes of a reserved list: every `dct256:<hex>` value in it, as `ocrkit data
    reserve` writes them in a `phash` column beside each sha256. A list without them gives an empty set."""
    if path is None:
        return NearDuplicates()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the reserved list ({exc.__class__.__name__})") from None
    return NearDuplicates([bytes.fromhex(m) for m in _VALUE.findall(text.lower())])
