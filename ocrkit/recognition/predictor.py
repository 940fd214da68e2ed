"""Recognizer = preprocessing (the folder's settings) + VisionEncoderDecoder + greedy/beam or CTC decoding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from transformers import VisionEncoderDecoderModel
from transformers.utils import logging as hf_logging

from ocrkit.blas import single_thread_blas
from ocrkit.errors import ModelError
from ocrkit.model_folder import check_folder
from ocrkit.recognition.buckets import same_shape_batches
from ocrkit.recognition.ctc import ctc_read, read_joint
from ocrkit.recognition.ctc_decoding import HEAD_DECODINGS, load_head, model_decoding
from ocrkit.recognition.decoding import generate
from ocrkit.recognition.joint import JointSettings, model_joint_settings
from ocrkit.recognition.model import freeze_unused
from ocrkit.recognition.preprocessing import LinePreprocess
from ocrkit.recognition.tokenizer import load_tokenizer


class Recognizer:
    """Reads text-line crops, batched by identical padded shape (the model reads batch padding badly)."""

    def __init__(
        self,
        model: VisionEncoderDecoderModel,
        tokenizer,
        preprocess: LinePreprocess,
        num_beams: int = 1,
        ctc_head: tuple[np.ndarray, np.ndarray] | None = None,
        joint: JointSettings | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.preprocess = preprocess
        self.num_beams = num_beams
        self.ctc_head = ctc_head  # (weight, bias): decode with the CTC head instead of the TrOCR decoder
        self.joint = joint  # set: rescore both decoders' readings (joint decoding)

    @classmethod
    def load(cls, model_dir: str | Path, num_beams: int = 1, decoding: str | None = None) -> Recognizer:
        """`decoding` overrides the folder's own choice (attention | ctc | joint)."""
        model_dir = Path(model_dir)
        preprocess = check_folder(model_dir, "recognizer").preprocess
        decoding = model_decoding(model_dir, decoding)
        ctc_head = load_head(model_dir) if decoding in HEAD_DECODINGS else None
        joint = model_joint_settings(model_dir) if decoding == "joint" else None
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
        return cls(model, tokenizer, preprocess, num_beams, ctc_head, joint)

    @torch.inference_mode()
    def recognize(self, crops: list[np.ndarray], batch_size: int = 16) -> list[tuple[str, float]]:
        """Line crops (HxW[xC] arrays) → [(text, confidence in 0..1)] in input order."""
        if not crops:
            return []
        images = [self.preprocess.apply(c) for c in crops]
        shapes = [im.shape[:2] for im in images]
        results: list[tuple[str, float] | None] = [None] * len(images)
        device = next(self.model.parameters()).device
        with single_thread_blas():
            for batch in same_shape_batches(shapes, batch_size):
                pixels = torch.from_numpy(self.preprocess.batch([images[i] for i in batch])).to(device)
                for i, pred in zip(batch, self._decode(pixels), strict=True):
                    results[i] = pred
        return results  # type: ignore[return-value]

    def _decode(self, pixels: torch.Tensor) -> list[tuple[str, float]]:
        if self.ctc_head is None:
            return generate(self.model, self.tokenizer, pixels, self.num_beams)
        if self.joint is not None:
            return read_joint(self.model, self.tokenizer, pixels, self.ctc_head, self.joint, self.num_beams)
        return ctc_read(self.model, self.tokenizer, pixels, self.ctc_head)
