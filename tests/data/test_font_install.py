"""More training faces: Debian font packages unpacked into a folder with a manifest, used by synth lines."""

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from ocrkit.data.synth import fonts
from ocrkit.data.synth.font_install import install_fonts
from ocrkit.data.synth.generate import generate_lines
from ocrkit.util.errors import OcrkitError

SERIF = fonts.FONT_DIR / "liberation" / "LiberationSerif-Regular.ttf"
MONO = fonts.FONT_DIR / "liberation" / "LiberationMono-Regular.ttf"


def _deb(tmp_path: Path, package: str) -> Path:
    """A real .deb (dpkg-deb -b) holding two faces and a machine-readable copyright file."""
    root = tmp_path / "build" / package
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 1.2-3\nArchitecture: all\nMaintainer: t <t@t>\nDescription: test\n"
    )
    faces = root / "usr" / "share" / "fonts" / "truetype" / "test"
    faces.mkdir(parents=True)
    shutil.copyfile(SERIF, faces / "Test-Regular.ttf")
    shutil.copyfile(MONO, faces / "TestMono-Regular.ttf")
    doc = root / "usr" / "share" / "doc" / package
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("Files: *\nLicense: OFL-1.1\n\nFiles: debian/*\nLicense: GPL-2+\n")
    deb = tmp_path / f"{package}_1.2-3_all.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True, capture_output=True
    )
    return deb


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs Debian's dpkg-deb")
def test_packages_are_unpacked_into_a_manifest_by_style(tmp_path, capsys):
    deb = _deb(tmp_path, "fonts-test")
    listing = tmp_path / "packages.yaml"
    listing.write_text(
        "fonts-test:\n  serif: [Test-Regular.ttf, Missing-*.ttf]\n  mono: [TestMono-*.ttf]\n"
        "fonts-gone:\n  sans: [x.ttf]\n"
    )

    def download(package, folder):
        if package != "fonts-test":
            raise OcrkitError(f"{package}: apt-get download failed (no such package)")
        return deb

    out = tmp_path / "faces"
    manifest = install_fonts(out, listing, download)
    assert manifest["styles"] == {
        "serif": ["fonts-test/Test-Regular.ttf"],
        "mono": ["fonts-test/TestMono-Regular.ttf"],
    }
    assert manifest["packages"] == [
        {"package": "fonts-test", "version": "1.2-3", "licences": ["GPL-2+", "OFL-1.1"]}
    ]
    assert json.loads((out / "fonts.json").read_text()) == manifest
    assert (out / "fonts-test" / "COPYRIGHT.debian").is_file()
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "ocrkit: error: fonts-test: no font file matches 'Missing-*.ttf'",
        "ocrkit: error: fonts-gone: apt-get download failed (no such package)",
    ]
    listing.write_text("fonts-test:\n  gothic: [x.ttf]\n")
    with pytest.raises(OcrkitError, match="unknown style class 'gothic'"):
        install_fonts(out, listing, download)


def test_a_manifest_adds_its_faces_to_their_classes_and_synth_lines_renders_them(tmp_path):
    shutil.copyfile(SERIF, tmp_path / "Extra.ttf")
    shutil.copyfile(MONO, tmp_path / "ExtraMono.ttf")
    manifest = tmp_path / "fonts.json"
    manifest.write_text(json.dumps({"styles": {"serif": ["Extra.ttf"], "typewriter": ["ExtraMono.ttf"]}}))
    rng = np.random.default_rng(0)
    try:
        fonts.use_extra_fonts(manifest)
        picked = {fonts.pick("serif", rng) for _ in range(200)}
        extra = str((tmp_path / "Extra.ttf").resolve())
        assert extra in picked and picked - {extra} <= set(fonts.STYLES["serif"])
        assert fonts.is_mono(str((tmp_path / "ExtraMono.ttf").resolve())) and not fonts.is_mono(extra)
        assert fonts.load(extra, 20).getlength("abc") > 0 and "a" in fonts.coverage(extra)
        fonts.use_extra_fonts(None)
        assert {fonts.pick("serif", rng) for _ in range(100)} <= set(fonts.STYLES["serif"])
        manifest.write_text(json.dumps({"styles": {"gothic": ["Extra.ttf"]}}))
        with pytest.raises(ValueError, match="unknown style class 'gothic'"):
            fonts.use_extra_fonts(manifest)
        manifest.write_text(json.dumps({"styles": {"serif": ["Extra.ttf"], "typewriter": ["ExtraMono.ttf"]}}))
        stats = generate_lines(
            tmp_path / "lines", 6, seed=1, kinds={"prose": 1.0}, progress=False, fonts=manifest
        )
        assert stats["lines"] == 6 and len((tmp_path / "lines" / "lines.jsonl").read_text().splitlines()) == 6
    finally:
        fonts.use_extra_fonts(None)


def _npm_tarball(tmp_path: Path, name: str, version: str) -> Path:
    """A real npm tarball (package/ prefix) holding one WOFF face, its LICENSE and package.json."""
    from fontTools.ttLib import TTFont

    root = tmp_path / "npm" / "package"
    (root / "files").mkdir(parents=True)
    face = TTFont(str(SERIF))
    face.flavor = "woff"
    face.save(str(root / "files" / f"{name}-latin-400-normal.woff"))
    (root / "LICENSE").write_text("SIL Open Font License 1.1\n")
    (root / "package.json").write_text(
        json.dumps({"name": f"@fontsource/{name}", "version": version, "license": "OFL-1.1"})
    )
    tarball = tmp_path / f"{name}-{version}.tgz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(root, arcname="package")
    return tarball


def test_npm_packages_are_unpacked_beside_debian_ones_and_their_woff_faces_render(tmp_path, capsys):
    tarball = _npm_tarball(tmp_path, "test-script", "5.3.0")
    listing = tmp_path / "packages.yaml"
    listing.write_text(
        '"@fontsource/test-script@5.3.0":\n  handwriting: [test-script-latin-400-normal.woff]\n'
        '"@fontsource/gone@1.0.0":\n  serif: [gone-latin-400-normal.woff]\n'
        '"@fontsource/unpinned":\n  serif: [x.woff]\n'
    )
    asked = []

    def download_npm(spec, folder):
        asked.append(spec)
        if spec != "@fontsource/test-script@5.3.0":
            raise OcrkitError(f"{spec}: download failed (HTTP Error 404: Not Found)")
        return tarball

    out = tmp_path / "faces"
    manifest = install_fonts(out, listing, download_npm=download_npm)
    assert asked == ["@fontsource/test-script@5.3.0", "@fontsource/gone@1.0.0"]
    assert manifest == {
        "styles": {"handwriting": ["fontsource-test-script/test-script-latin-400-normal.woff"]},
        "packages": [{"package": "@fontsource/test-script", "version": "5.3.0", "licences": ["OFL-1.1"]}],
    }
    assert (out / "fontsource-test-script" / "LICENSE").read_text().startswith("SIL Open Font")
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "ocrkit: error: @fontsource/gone@1.0.0: download failed (HTTP Error 404: Not Found)",
        "ocrkit: error: @fontsource/unpinned: an npm package is named @scope/name@version",
    ]
    face = str((out / "fontsource-test-script" / "test-script-latin-400-normal.woff").resolve())
    assert fonts.load(face, 24).getlength("Ecrit") > 0 and "é" in fonts.coverage(face)


def test_an_npm_tarball_cannot_write_outside_its_folder(tmp_path, capsys):
    tarball = tmp_path / "evil-1.0.0.tgz"
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(payload, arcname="../../escaped.txt")
    listing = tmp_path / "packages.yaml"
    listing.write_text('"@fontsource/evil@1.0.0":\n  serif: [x.woff]\n')
    manifest = install_fonts(tmp_path / "faces", listing, download_npm=lambda spec, folder: tarball)
    assert manifest["packages"] == [] and not (tmp_path.parent / "escaped.txt").exists()
    assert "evil-1.0.0.tgz: cannot unpack" in capsys.readouterr().err
