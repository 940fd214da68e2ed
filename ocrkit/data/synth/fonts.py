"""Registry of the fonts shipped in ocrkit/fonts, grouped by the style classes the layouts ask for.

Fonts come only from the package folder (never the system), so generated data is the same on every machine.
More faces join a run only when asked: a manifest written by `ocrkit synth fonts` (Debian and npm font
packages, ocrkit.data.synth.font_install) adds its files to their classes (`use_extra_fonts`).
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np
from fontTools.ttLib import TTFont
from PIL import ImageFont

FONT_DIR = Path(__file__).resolve().parents[2] / "fonts"
# fontTools reports a harmless quirk of one shipped face's `post` table ("1 extra bytes in post.stringData
# array") on stderr with no logging set up, in the middle of `ocrkit finetune`'s output; the glyph table it
# reads is whole
logging.getLogger("fontTools.ttLib.tables._p_o_s_t").setLevel(logging.ERROR)

# style class -> font files relative to FONT_DIR. A file may serve several classes (e.g. receipts reuse
# condensed and mono faces); ocrkit/fonts/README.md documents the same table with licenses.
STYLES: dict[str, tuple[str, ...]] = {
    "serif": (
        "liberation/LiberationSerif-Regular.ttf",
        "liberation/LiberationSerif-Italic.ttf",
        "urw-base35/C059-Roman.otf",
        "urw-base35/P052-Roman.otf",
        "urw-base35/URWBookman-Light.otf",
        "ebgaramond/EBGaramond12-Regular.otf",
        "oldstandard/OldStandard-Regular.ttf",
    ),
    "serif_bold": (
        "liberation/LiberationSerif-Bold.ttf",
        "urw-base35/NimbusRoman-Bold.otf",
        "noto/NotoSerif-Bold.ttf",
    ),
    "sans": (
        "liberation/LiberationSans-Regular.ttf",
        "urw-base35/NimbusSans-Regular.otf",
        "open-sans/OpenSans-Regular.ttf",
        "dejavu/DejaVuSans.ttf",
        "roboto/Roboto-Regular.ttf",
        "go/Go-Regular.ttf",
    ),
    "sans_bold": (
        "liberation/LiberationSans-Bold.ttf",
        "urw-base35/NimbusSans-Bold.otf",
        "roboto/Roboto-Bold.ttf",
    ),
    "condensed": (
        "urw-base35/NimbusSansNarrow-Regular.otf",
        "urw-base35/NimbusSansNarrow-Bold.otf",
        "open-sans/OpenSans-CondBold.ttf",
        "dejavu/DejaVuSansCondensed.ttf",
        "dejavu/DejaVuSansCondensed-Bold.ttf",
        "roboto/RobotoCondensed-Regular.ttf",
        "roboto/RobotoCondensed-Bold.ttf",
    ),
    "mono": (
        "liberation/LiberationMono-Regular.ttf",
        "liberation/LiberationMono-Bold.ttf",
        "inconsolata/Inconsolata.otf",
        "dejavu/DejaVuSansMono.ttf",
        "go/Go-Mono.ttf",
        "go/Go-Mono-Bold.ttf",
    ),
    "typewriter": (
        "urw-base35/NimbusMonoPS-Regular.otf",
        "urw-base35/NimbusMonoPS-Bold.otf",
        "courier-prime/CourierPrime.otf",
        "gnutypewriter/GNUTypewriter.ttf",
    ),
    "receipt": (
        "urw-base35/NimbusSansNarrow-Regular.otf",
        "urw-base35/NimbusSansNarrow-Bold.otf",
        "dejavu/DejaVuSansCondensed.ttf",
        "dejavu/DejaVuSansCondensed-Bold.ttf",
        "inconsolata/Inconsolata.otf",
        "dejavu/DejaVuSansMono.ttf",
        "liberation/LiberationMono-Regular.ttf",
        "urw-base35/NimbusMonoPS-Bold.otf",
        "liberation/LiberationSans-Regular.ttf",
        "open-sans/OpenSans-CondBold.ttf",
        "roboto/RobotoCondensed-Regular.ttf",
        "roboto/RobotoCondensed-Bold.ttf",
        "roboto/Roboto-Regular.ttf",
        "go/Go-Mono.ttf",
        "go/Go-Mono-Bold.ttf",
    ),
    "fraktur": ("blankenburg/Blankenburg_UNZ1A.ttf", "gotico-antiqua/Jessen-Mittel14.otf"),
    "handwriting": (
        "kristi/Kristi.ttf",
        "dancingscript/DancingScript-Regular.otf",
        "comic-neue/ComicNeue-Regular.otf",
        "breip/Breip.ttf",
        "ecolier-court/Ecolier-court.ttf",
        "humor-sans/Humor-Sans.ttf",
    ),
}

MONO_FILES = frozenset(STYLES["mono"] + STYLES["typewriter"])
CAPS_ONLY = frozenset({"humor-sans/Humor-Sans.ttf"})  # draws capitals for lower-case code points
_EXTRA: dict[str, tuple[str, ...]] = {}  # style class -> absolute paths of a manifest's faces


def use_extra_fonts(manifest: str | Path | None) -> None:
    """Add the faces of a font manifest (`ocrkit synth fonts` writes its `fonts.json`) to their style
    classes for this process, or (None) use the shipped fonts alone."""
    _EXTRA.clear()
    if manifest is None:
        return
    path = Path(manifest)
    styles = json.loads(path.read_text(encoding="utf-8"))["styles"]
    unknown = sorted(set(styles) - set(STYLES))
    if unknown:
        raise ValueError(f"{path}: unknown style class {unknown[0]!r} (known: {', '.join(STYLES)})")
    for style, files in styles.items():
        _EXTRA[style] = tuple(str((path.parent / f).resolve()) for f in files)


def pick(style: str, rng: np.random.Generator) -> str:
    """A random font file of one style class: a path relative to FONT_DIR, or an added face's absolute
    path."""
    files = STYLES[style] + _EXTRA.get(style, ())
    return files[int(rng.integers(len(files)))]


def is_mono(font: str) -> bool:
    """Whether every glyph of the face has one advance (columns of a receipt line up)."""
    return font in MONO_FILES or font in _EXTRA.get("mono", ()) + _EXTRA.get("typewriter", ())


@lru_cache(maxsize=256)
def load(rel_path: str, size_px: int) -> ImageFont.FreeTypeFont:
    """A PIL font at a pixel size; cached per process because layouts reuse a handful of sizes."""
    return ImageFont.truetype(str(FONT_DIR / rel_path), size=size_px)


@lru_cache(maxsize=64)
def coverage(rel_path: str) -> frozenset[str]:
    """Characters the font really has glyphs for: labels must only contain what is drawn."""
    cmap = TTFont(str(FONT_DIR / rel_path), lazy=True).getBestCmap() or {}
    return frozenset(chr(c) for c in cmap)
