"""`ocrkit` command line: parses arguments, calls library code, turns known errors into one line."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ocrkit import __version__
from ocrkit.util.argparse_kit import Parser
from ocrkit.util.config import ConfigError
from ocrkit.util.errors import OcrkitError, report_error
from ocrkit.util.extras import missing_extra

# Each module in ocrkit/commands exposes register(subparsers); the order is the order in --help.
COMMANDS = (
    *("infer", "detect", "recognize", "models", "synth", "data"),
    *("finetune", "train", "evaluate", "export", "serve"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="ocrkit", description="Find text lines on document pages and read them.")
    parser.add_argument("--version", action="version", version=f"ocrkit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"ocrkit.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a bad option already reported in one line
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return int(args.func(args) or 0)
    except (OcrkitError, ConfigError) as exc:
        if args.debug:
            raise
        report_error(exc)
        return 2
    except ModuleNotFoundError as exc:  # a package of an install extra this install lacks
        error = missing_extra(exc, f"ocrkit {args.command}")
        if error is None or args.debug:
            raise
        report_error(error)
        return 2
    except KeyboardInterrupt:
        print("ocrkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output left (`| head`): stop quietly, as Unix tools do
        stop_writing_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by the broken pipe


def stop_writing_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush meets no closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
