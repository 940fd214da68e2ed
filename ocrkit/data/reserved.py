"""The reserved list: sha256 hashes of evaluation files that no import may take.

One function reads it, strictly: a list that silently yields nothing would let every evaluation page
into training, so a line this parser does not understand, or a list without a single hash, is an error
that names the file and the line. Accepted line forms (blank lines and `#` comments skipped):

- `<sha256><TAB>kind<TAB>source` — the documented format, with an optional `sha256<TAB>…` header line;
- `<sha256>  <name>` and `<sha256> *<name>` — what `sha256sum` writes;
- `SHA256 (<name>) = <sha256>` — what BSD `sha256` / `shasum --tag` write;
- a bare `<sha256>`.
"""

from __future__ import annotations

import re
from pathlib import Path

from ocrkit.util.errors import InputError

_HEX = r"[0-9a-fA-F]{64}"
_PLAIN = re.compile(rf"({_HEX})(?:\s.*)?")  # hash first, then whitespace and anything (tab or sha256sum)
_TAGGED = re.compile(rf"SHA256 \(.*\) = ({_HEX})")
_HEADER = re.compile(r"(sha256|hash)(\s.*)?", re.IGNORECASE)


def read_reserved(path: str | Path) -> set[str]:
    """The lower-case sha256 hashes listed in `path`; InputError (naming the file, and the line where one
    is at fault) when it is missing, not UTF-8, holds a line in none of the accepted forms, or no hash."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "reserved list not found" + (" (this is a folder)" if path.is_dir() else ""))
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError(path, f"cannot read the reserved list ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        line = text_line_of(exc)
        raise InputError(f"{path}:{line}", "reserved list is not UTF-8 text") from None
    hashes: set[str] = set()
    seen_content = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        found = _PLAIN.fullmatch(line) or _TAGGED.fullmatch(line)
        if found:
            hashes.add(found.group(1).lower())
        elif not seen_content and _HEADER.fullmatch(line):
            pass  # the column header of the tab-separated format
        else:
            shown = line if len(line) <= 40 else line[:37] + "..."
            raise InputError(f"{path}:{n}", f"not a sha256 line ({shown!r}); expected '<sha256> <name>'")
        seen_content = True
    if not hashes:
        raise InputError(path, "the reserved list holds no sha256 hash, so it would protect nothing")
    return hashes


def text_line_of(exc: UnicodeDecodeError) -> int:
    """The 1-based line of the first byte that is not UTF-8."""
    return exc.object[: exc.start].count(b"\n") + 1
