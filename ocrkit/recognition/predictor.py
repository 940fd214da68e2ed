"""Recognizer = the folder's preprocessing + VisionEncoderDecoder in torch, read by ocrkit.decode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from transformers import VisionEncoderDecoderModel
from transformers.utils import logging as hf_logging

from ocrkit.decode.ctc import CtcHead, Decoding
from ocrkit.decode.read import ReadSettings, read_crops, read_crops_placed
from ocrkit.hub.model_folder import check_folder, chosen_decoding, folder_ctc_head
from ocrkit.pages.words import PlacedText, placed_text
from ocrkit.recognition.model import freeze_unused
from ocrkit.recognition.tokenizer import decode, load_tokenizer
from ocrkit.recognition.torch_backend import TorchBackend
from ocrkit.util.errors import ModelError


class Recognizer:
    """Reads text-line crops with the TrOCR decoder, the CTC head, or both rescored (joint)."""

    def __init__(
        self,
        model: VisionEncoderDecoderModel,
        tokenizer,
        settings: ReadSettings,
        ctc_head: CtcHead | None = None,
    ) -> None:
        if Decoding(settings.decoding).reads_head and ctc_head is None:
            raise ValueError(f"{settings.decoding} decoding needs a CTC head")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.ctc_head = ctc_head  # read by ctc and joint decoding, and for lines wider than `longest`
        self.backend = TorchBackend(self.model, ctc_head)
        self.glyphs = [decode(tokenizer, [i]) for i in range(len(tokenizer))]  # one token's text, by id
        self.settings = settings.for_glyphs(self.glyphs)

    @classmethod
    def load(cls, model_dir: str | Path, decoding: str | None = None) -> Recognizer:
        """`decoding` overrides the folder's own choice (attention | ctc | joint)."""
        model_dir = Path(model_dir)
        spec = check_folder(model_dir, "recognizer")
        chosen = chosen_decoding(spec, decoding, model_dir)
        ctc_head = folder_ctc_head(model_dir, spec, chosen)
        tokenizer = load_tokenizer(model_dir)
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # a missing unused ViT pooler is not worth a warning
        try:
            model = VisionEncoderDecoderModel.from_pretrained(str(model_dir), use_safetensors=True)
        except (OSError, ValueError, RuntimeError, SafetensorError) as exc:
            raise ModelError(model_dir, f"cannot load recognizer ({exc.__class__.__name__}: {exc})") from None
        finally:
            hf_logging.set_verbosity(verbosity)
        freeze_unused(model)
        return cls(model, tokenizer, spec.read_settings(chosen), ctc_head)

    @torch.inference_mode()
    def recognize(
        self, crops: list[np.ndarray], batch_size: int = 16, trim_margins: bool | None = None
    ) -> list[tuple[str, float]]:
        """Line crops (HxW[xC] arrays) → [(text, confidence in 0..1)] in input order. `trim_margins`
        overrides the folder's setting: crops framed by other tools read better cut to their line."""
        settings = self.settings if trim_margins is None else self.settings.with_trim_margins(trim_margins)
        readings = read_crops(self.backend, settings, crops, batch_size)
        return [(decode(self.tokenizer, ids), conf) for ids, conf in readings]

    @torch.inference_mode()
    def read_placed(
        self, crops: list[np.ndarray], batch_size: int = 16, trim_margins: bool | None = None
    ) -> list[PlacedText]:
        """`recognize`, with where each character sits on its crop (ocrkit.pages.words places words by
        it); `trim_margins` overrides the folder's setting."""
        settings = self.settings if trim_margins is None else self.settings.with_trim_margins(trim_margins)
        readings = read_crops_placed(self.backend, settings, crops, batch_size)
        return [placed_text(r, decode(self.tokenizer, r.ids), self.glyphs) for r in readings]

    @torch.inference_mode()
    def line_confidences(self, crops: list[np.ndarray], batch_size: int = 16) -> list[float]:
        """How sure the CTC head (or without one, the decoder) reads each crop: cheap enough to read a
        page's lines twice (ocrkit.orientation.lines)."""
        settings = self.settings.ctc_only() if self.ctc_head is not None else self.settings
        readings = read_crops(self.backend, settings, crops, batch_size)
        return [conf for _, conf in readings]
