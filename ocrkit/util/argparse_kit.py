"""The argparse parser every ocrkit command line uses: `ocrkit` and its commands, and the scripts in
tools/. A bad option is one `ocrkit: error:` line (exit code 2), and `--help` lists each
option's default after its help text.

It knows no ocrkit option (those are declared in ocrkit.commands.options), so every layer that parses a
command line can import it without importing the command line.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ocrkit.util.errors import report_error


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds `(default: …)` to an option's help, except where there is no value to show (None, a flag, an
    empty string or list); such options say in their help what happens without them."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, "", [], argparse.SUPPRESS) or "%(default)" in text:
            return text
        return super()._get_help_string(action) or text


class DocHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """HelpFormatter for a command described by its module's docstring: the description keeps its lines."""


class Parser(argparse.ArgumentParser):
    """The parser of `ocrkit` and of each of its commands (sub-parsers are made of the same class)."""

    def __init__(self, *args, hint: str = "", **kwargs) -> None:
        """`hint`: a sentence added to this parser's errors (what the user most likely meant)."""
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.hint = hint

    def error(self, message: str) -> NoReturn:
        report_error(f"{message} (see {self.prog} --help){'; ' + self.hint if self.hint else ''}")
        self.exit(2)
