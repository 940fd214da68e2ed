"""`ocrkit synth fonts`: more training faces, from Debian and npm font packages, in a folder with a manifest.

Why: the recognizer reads the kinds of print and hands it was shown; 21 shipped families cannot show it
the typewriters, modern serifs, grotesques, old styles and cursive hands of documents it has never seen,
and breadth of faces is what large printed-text recognizers are trained on. Debian packages hold most
book and office faces; the hands (copperplate, roundhand, everyday script), Fraktur and 17th-c. types
come from the `@fontsource` packages of the npm registry (Google Fonts' open faces as WOFF files, which
FreeType reads). The faces are not committed: each user installs them (`font_packages.yaml` names the
packages and the style class of each file), and `ocrkit synth lines --fonts OUT/fonts.json` renders with
them beside the shipped ones.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from ocrkit.data.synth.fonts import STYLES, coverage
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.config import read_yaml
from ocrkit.util.errors import OcrkitError, report_error

PACKAGES = Path(__file__).with_name("font_packages.yaml")
MANIFEST = "fonts.json"
NPM_REGISTRY = "https://registry.npmjs.org"
FACE_SUFFIXES = (".ttf", ".otf", ".woff")
BASIC_LATIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LICENSE = re.compile(r"^License:\s*(\S.*)$", re.MULTILINE)
_NPM_SPEC = re.compile(r"^(@[a-z0-9-]+/[a-z0-9._-]+)@([0-9][0-9A-Za-z.+-]*)$")


@dataclass
class Unpacked:
    """A fetched package: its files under `root`, its version, licences and licence text (if any)."""

    root: Path
    version: str
    licences: list[str]
    notice: Path | None


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


def npm_download(spec: str, folder: Path) -> Path:
    """The tarball of an npm package pinned as `@scope/name@version`, fetched from the registry."""
    name, version = _npm_parts(spec)
    url = f"{NPM_REGISTRY}/{name}/-/{name.split('/')[-1]}-{version}.tgz"
    target = folder / f"{name.replace('/', '_')}-{version}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as sink:
            shutil.copyfileobj(response, sink)
    except (urllib.error.URLError, OSError) as exc:
        raise OcrkitError(f"{spec}: download failed ({exc})") from None
    return target


def install_fonts(
    out: Path,
    packages: Path = PACKAGES,
    download: Callable[[str, Path], Path] = apt_download,
    download_npm: Callable[[str, Path], Path] = npm_download,
) -> dict:
    """Fetch and unpack every listed package (a Debian name, or an npm `@scope/name@version`), copy the
    listed faces that draw basic Latin into out/<folder>/ with the package's licence text, and write
    out/fonts.json: {"styles": {class: [paths relative to out]}, "packages": [{package, version,
    licences}]}. A package that cannot be fetched, or a pattern that matches no file, is one line on
    stderr; the others are installed."""
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
                folder = Path(tmp) / _folder(package)  # an unpinned npm name stops here
                if package.startswith("@"):
                    unpacked = _unpack_npm(download_npm(package, Path(tmp)), folder)
                else:
                    unpacked = _unpack_deb(download(package, Path(tmp)), folder)
            except OcrkitError as exc:
                report_error(str(exc))
                continue
            sources.append(_copy_package(package, unpacked, wanted, out, styles))
    manifest = {"styles": styles, "packages": sources}
    write_atomic(out / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def _npm_parts(spec: str) -> tuple[str, str]:
    match = _NPM_SPEC.match(spec)
    if not match:
        raise OcrkitError(f"{spec}: an npm package is named @scope/name@version")
    return match.group(1), match.group(2)


def _folder(package: str) -> str:
    """The package's folder under the output: its Debian name, or `scope-name` for an npm package."""
    return _npm_parts(package)[0].lstrip("@").replace("/", "-") if package.startswith("@") else package


def _unpack_deb(deb: Path, folder: Path) -> Unpacked:
    try:
        done = subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], capture_output=True, text=True)
    except FileNotFoundError:
        raise OcrkitError("dpkg-deb not found: `ocrkit synth fonts` unpacks Debian font packages") from None
    if done.returncode != 0:
        raise OcrkitError(f"{deb.name}: cannot unpack ({done.stderr.strip()[-200:]})")
    package = deb.name.split("_")[0]
    notice = folder / "usr" / "share" / "doc" / package / "copyright"
    licences: list[str] = []
    if notice.is_file():
        licences = sorted(set(_LICENSE.findall(notice.read_text(encoding="utf-8", errors="replace"))))
    version = deb.stem.split("_")[1] if deb.stem.count("_") >= 1 else ""
    return Unpacked(folder, version, licences, notice if notice.is_file() else None)


def _unpack_npm(tarball: Path, folder: Path) -> Unpacked:
    """An npm tarball unpacked (members outside the folder, links and devices refused by tarfile's data
    filter); version and licence from its package.json, licence text from its LICENSE file."""
    try:
        with tarfile.open(tarball) as archive:
            archive.extractall(folder, filter="data")
        meta = json.loads((folder / "package" / "package.json").read_text(encoding="utf-8"))
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise OcrkitError(f"{tarball.name}: cannot unpack ({exc.__class__.__name__}: {exc})") from None
    licence = meta.get("license")
    notice = folder / "package" / "LICENSE"
    return Unpacked(
        folder / "package",
        str(meta.get("version", "")),
        [licence] if isinstance(licence, str) else [],
        notice if notice.is_file() else None,
    )


def _copy_package(
    package: str, unpacked: Unpacked, wanted: dict, out: Path, styles: dict[str, list[str]]
) -> dict:
    """Copy one unpacked package's listed faces and licence text into out/<folder>/; add them to `styles`."""
    faces = {p.name: p for p in unpacked.root.rglob("*") if p.suffix.lower() in FACE_SUFFIXES and p.is_file()}
    folder = _folder(package)
    dest = out / folder
    dest.mkdir(parents=True, exist_ok=True)
    if unpacked.notice is not None:
        shutil.copyfile(
            unpacked.notice, dest / ("LICENSE" if package.startswith("@") else "COPYRIGHT.debian")
        )
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
                styles.setdefault(style, []).append(f"{folder}/{name}")
    name = _npm_parts(package)[0] if package.startswith("@") else package
    return {"package": name, "version": unpacked.version, "licences": unpacked.licences}
