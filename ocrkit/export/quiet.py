"""What every export shares: third-party chatter kept from users, and the model card carried along.

Tracing warns about Python control flow in transformers' models (dozens of lines that read like
failures and are about code paths the export does not take), and Optimum logs its own output check as
an error when the encoder differs from torch by more than 1e-5 (4e-5 for the shipped recognizer: float
arithmetic in another order). ocrkit checks exports against torch where it matters, on readings (the
torch/ONNX parity tests), so these are silenced, and the largest difference Optimum saw is said in one
line.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ocrkit.hub.model_info import CARD_NAME

CHATTY_LOGGERS = ("optimum", "transformers", "torch.onnx")
_MAX_DIFF = re.compile(r"max diff(?: =|:) *([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def quiet_export(what: str) -> Iterator[None]:
    """Run an export of `what` without third-party warnings or log lines; afterwards, one line with the
    largest output difference the exporter's own check reported, if it reported one."""
    collect = _Collect()
    saved = {}
    for name in CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        saved[name] = (logger.level, logger.propagate, list(logger.handlers))
        logger.handlers, logger.propagate = [collect], False
        logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, (level, propagate, handlers) in saved.items():
            logger = logging.getLogger(name)
            logger.setLevel(level)
            logger.propagate, logger.handlers = propagate, handlers
    diffs = [float(m) for message in collect.messages for m in _MAX_DIFF.findall(message)]
    if diffs:
        print(f"ocrkit: {what}: ONNX outputs within {max(diffs):.1e} of torch's", file=sys.stderr)


def carry_card(model_dir: Path, out_dir: Path) -> None:
    """The model card goes with the export: the weights' licence and data conditions travel with them."""
    if (model_dir / CARD_NAME).is_file():
        shutil.copy2(model_dir / CARD_NAME, out_dir / CARD_NAME)
