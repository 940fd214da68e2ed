"""`ocrkit synth fonts`: more training faces, from Debian font packages, in a folder with a manifest.

Why: the recognizer reads the kinds of print it was shown; 21 shipped families cannot show it the
typewriters, modern serifs, grotesques and old styles of documents it has never seen, and breadth of
faces is what large printed-text recognizers are trained on. The faces are not committed: each user
installs them (`font_packages.yaml` names the packages and the style class of each file), and
`ocrkit synth lines --fonts OUT/fonts.json` renders with them beside the shipped ones.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path

from ocrkit.data.synth.fonts import STYLES, coverage
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.config import read_yaml
from ocrkit.util.errors import OcrkitError, report_error

PACKAGES = Path(__file__).with_name("font_packages.yaml")
MANIFEST = "fonts.json"
BASIC_LATIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LICENSE = re.compile(r"^License:\s*(\S.*)$", re.MULTILINE)


def apt_download(package: str, folder: Path) -> Path:
    """The package's .deb, fetched into `folder` by `apt-get download` (no root needed)."""
    try:
        done = subprocess.run(["apt-get", "download", package], cwd=folder, capture_output=True, text=True)
    except FileNotFoundError:
        raise OcrkitError("apt-get not found: `ocrkit synth fonts` installs Debian font packages") from None
    debs = sorted(folder.glob(f"{package}_*.deb"))
    if done.returncode != 0 or not debs:
        raise OcrkitError(f"{package}: apt-get download failed ({(done.stderr or '').strip()[-200:]})")
    return debs[-1]


def install_fonts(
    out: Path, packages: Path = PACKAGES, download: Callable[[str, Path], Path] = apt_download
) -> dict:
    """Fetch and unpack every listed package, copy the listed faces that draw basic Latin into
    out/<package>/ with the package's copyright file, and write out/fonts.json: {"styles": {class:
    [paths relative to out]}, "packages": [{package, version, licences}]}. A package that cannot be
    fetched, or a pattern that matches no file, is one line on stderr; the others are installed."""
    spec = read_yaml(packages)
    unknown = sorted({style for wanted in spec.values() for style in wanted} - set(STYLES))
    if unknown:
        raise OcrkitError(f"{packages}: unknown style class {unknown[0]!r} (known: {', '.join(STYLES)})")
    out.mkdir(parents=True, exist_ok=True)
    styles: dict[str, list[str]] = {}
    sources = []
    with tempfile.TemporaryDirectory() as tmp:
        for package, wanted in spec.items():
            try:
                deb = download(package, Path(tmp))
                root = _unpack(deb, Path(tmp) / package)
            except OcrkitError as exc:
                report_error(str(exc))
                continue
            sources.append(_copy_package(package, deb, root, wanted, out, styles))
    manifest = {"styles": styles, "packages": sources}
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def _unpack(deb: Path, folder: Path) -> Path:
    try:
        done = subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], capture_output=True, text=True)
    except FileNotFoundError:
        raise OcrkitError("dpkg-deb not found: `ocrkit synth fonts` unpacks Debian font packages") from None
    if done.returncode != 0:
        raise OcrkitError(f"{deb.name}: cannot unpack ({done.stderr.strip()[-200:]})")
    return folder


def _copy_package(
    package: str, deb: Path, root: Path, wanted: dict, out: Path, styles: dict[str, list[str]]
) -> dict:
    """Copy one unpacked package's listed faces and copyright into out/<package>/; add them to `styles`."""
    faces = {p.name: p for p in root.rglob("*") if p.suffix.lower() in (".ttf", ".otf") and p.is_file()}
    dest = out / package
    dest.mkdir(parents=True, exist_ok=True)
    notice = root / "usr" / "share" / "doc" / package / "copyright"
    licences: list[str] = []
    if notice.is_file():
        shutil.copyfile(notice, dest / "COPYRIGHT.debian")
        licences = sorted(set(_LICENSE.findall(notice.read_text(encoding="utf-8", errors="replace"))))
    for style, patterns in wanted.items():
        for pattern in patterns:
            names = sorted(name for name in faces if fnmatch(name, pattern))
            if not names:
                report_error(f"{package}: no font file matches {pattern!r}")
            for name in names:
                shutil.copyfile(faces[name], dest / name)
                if not BASIC_LATIN <= coverage(str((dest / name).resolve())):
                    report_error(f"{package}/{name}: lacks basic Latin letters or digits; left out")
                    continue
                styles.setdefault(style, []).append(f"{package}/{name}")
    version = deb.stem.split("_")[1] if deb.stem.count("_") >= 1 else ""
    return {"package": package, "version": version, "licences": licences}
