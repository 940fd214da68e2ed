"""Writing outputs: atomic files and folders that never leave debris, output folders checked before any
work, and text that is always valid UTF-8 even when a file name is not."""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ocrkit.util.errors import OcrkitError

TEMP_SUFFIX = ".tmp"


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write via a temp file + rename, so a killed process never leaves a half-written output; on any
    error (full disk, bad text, interrupt) the temp file is removed before the error propagates."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data  # fails before any file exists
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _fsync(path: Path) -> None:
    """A file's data, or a folder's entries, on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def replace_folder(final: Path, write: Callable[[Path], None]) -> Path:
    """Build a folder with `write(tmp)` in a temp sibling, flush it to disk, then swap it in for `final`
    in one rename, so a kill at any moment leaves the previous `final` (a best model, a checkpoint) or
    the new one complete, never a half-written mix. Where the file system cannot swap atomically, the old
    folder is first renamed to `.NAME.PID.old` (kept if a kill falls between the two renames)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(final.parent)
    tmp = _temp_name(final)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        write(tmp)
        for path in (*tmp.rglob("*"), tmp):  # data on disk before the rename makes it visible
            _fsync(path)
        if not final.exists():
            os.replace(tmp, final)
        elif _exchange(tmp, final):
            shutil.rmtree(tmp)  # now the previous contents
        else:
            old = final.with_name(f".{final.name}.{os.getpid()}.old")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old)
        _fsync(final.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(folder: Path) -> None:
    """Remove the temp files and folders of write_atomic / replace_folder left under `folder` by a process
    that was killed (`.<name>.<pid>.tmp` whose process is gone); those of a run still going are kept."""
    for tmp in list(folder.rglob(f".*{TEMP_SUFFIX}")):
        pid = tmp.name[: -len(TEMP_SUFFIX)].rsplit(".", 1)[-1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)


def _check_writable(folder: Path, what: str) -> None:
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ocrkit-probe-")
    except OSError as exc:
        raise OcrkitError(f"{folder}: {what} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def prepare_out_dir(folder: Path) -> Path:
    """Create the `--out` folder and prove it writable before any model loads or page is read, and
    clear temp files a killed run left there."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OcrkitError(f"{folder}: --out must be a folder, and this is a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OcrkitError(f"{folder}: cannot create the output folder ({exc.strerror or exc})") from None
    _check_writable(folder, "output folder")
    remove_stale_temps(folder)
    return folder


def prepare_out_file(path: Path) -> Path:
    """Check an `--out` file can be written (its folder created and writable, not itself a folder)
    before any work is done."""
    path = Path(path)
    if path.is_dir():
        raise OcrkitError(f"{path}: --out must be a file, and this is a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OcrkitError(f"{path.parent}: cannot create the output folder ({exc.strerror or exc})") from None
    _check_writable(path.parent, "output folder")
    return path
