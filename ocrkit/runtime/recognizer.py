"""Torch-free line recognizer: Optimum-exported encoder + KV-cache decoder (greedy), CTC head, or both
rescored (joint), in numpy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ocrkit.decode.ctc import Decoding
from ocrkit.decode.read import read_crops, read_crops_placed
from ocrkit.hub.model_folder import check_folder, chosen_decoding, folder_ctc_head
from ocrkit.pages.words import PlacedText, placed_text
from ocrkit.runtime.session import create_session
from ocrkit.util.errors import ModelError

ENCODER_MASK = "encoder_attention_mask"  # the decoders' cross-attention mask input (ocrkit.export)
# Decoder steps are tiny (one token for each line in flight): split over threads they wait on each other, and
# the idle threads' spinning slows what runs next. SROIE dev pages, 2-core CPU, interleaved rounds:
# recognition 0.153 → 0.136 s/page and detection 0.131 → 0.103 s/page with the step graph on one thread.
# The full decoder graph gets the user's threads: besides each loop's first step it teacher-forces joint
# decoding's candidates, whole batches (joint recognition on the dev receipts 1.06 → 0.85 s/page).
DECODER_THREADS = 1


class OnnxRecognizer:
    """Same contract as the torch recognizer: recognize(crops) → [(text, score)] in input order."""

    def __init__(
        self,
        folder: str | Path,
        threads: int | None = None,
        opt_level: str = "all",
        decoding: str | None = None,
    ) -> None:
        folder = Path(folder)
        spec = check_folder(folder, "recognizer")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.start_id = int(config["decoder_start_token_id"])
        self.eos_id = int(config["eos_token_id"])
        self.blank_id = int(config.get("pad_token_id", config["decoder"]["pad_token_id"]))
        self.patch = int(config["encoder"]["patch_size"])
        chosen = chosen_decoding(spec, decoding, folder)
        self.ctc_head = folder_ctc_head(folder, spec, chosen)
        self.max_positions = int(config["decoder"]["max_position_embeddings"])
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise ModelError(folder, "tokenizer.json is missing")
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        size = self.tokenizer.get_vocab_size()
        self.glyphs = [self.tokenizer.decode([i], skip_special_tokens=True) for i in range(size)]
        self.settings = spec.read_settings(chosen).for_glyphs(self.glyphs)
        self.encoder = create_session(folder / "encoder_model.onnx", threads, opt_level)
        self.masks_encoder = False
        if chosen is Decoding.CTC:
            return  # the CTC head reads the encoder's output: no decoder sessions needed
        self.decoder = create_session(folder / "decoder_model.onnx", threads, opt_level)
        self.decoder_past = create_session(
            folder / "decoder_with_past_model.onnx", DECODER_THREADS, opt_level
        )
        self.past_names = [
            i.name for i in self.decoder_past.get_inputs() if i.name.startswith("past_key_values")
        ]
        # exports made before the mask existed still read, one greedy loop per line width
        self.masks_encoder = ENCODER_MASK in {i.name for i in self.decoder.get_inputs()}

    def recognize(self, crops: list[np.ndarray], batch_size: int = 16) -> list[tuple[str, float]]:
        readings = read_crops(self, self.settings, crops, batch_size)
        return [(self.tokenizer.decode(ids, skip_special_tokens=True), conf) for ids, conf in readings]

    def read_placed(
        self, crops: list[np.ndarray], batch_size: int = 16, trim_margins: bool | None = None
    ) -> list[PlacedText]:
        """`recognize`, with where each character sits on its crop (ocrkit.pages.words places words by
        it); `trim_margins` overrides the folder's setting."""
        settings = self.settings if trim_margins is None else self.settings.with_trim_margins(trim_margins)
        readings = read_crops_placed(self, settings, crops, batch_size)
        texts = [self.tokenizer.decode(r.ids, skip_special_tokens=True) for r in readings]
        return [placed_text(r, text, self.glyphs) for r, text in zip(readings, texts, strict=True)]

    def line_confidences(self, crops: list[np.ndarray], batch_size: int = 16) -> list[float]:
        """How sure the CTC head (or without one, the decoder) reads each crop (ocrkit.orientation.lines)."""
        settings = self.settings.ctc_only() if self.ctc_head is not None else self.settings
        return [conf for _, conf in read_crops(self, settings, crops, batch_size)]

    # -- ocrkit.decode.read.RecognizerBackend ---------------------------------------------------------
    def encode(self, pixels: np.ndarray) -> np.ndarray:
        (hidden,) = self.encoder.run(["last_hidden_state"], {"pixel_values": pixels})
        return hidden

    def ctc_logits(self, states: np.ndarray, pixel_shape: tuple[int, int]) -> np.ndarray:
        return self.ctc_head.logits(states, pixel_shape, self.patch)

    def pad_states(self, states: list[np.ndarray]) -> np.ndarray:
        # one zeroed array filled in place: np.pad per line was 6x slower, ~6 % of recognizing a receipt
        rows, longest = sum(len(s) for s in states), max(s.shape[1] for s in states)
        out = np.zeros((rows, longest, states[0].shape[2]), states[0].dtype)
        at = 0
        for s in states:
            out[at : at + len(s), : s.shape[1]] = s
            at += len(s)
        return out

    def score(self, states: np.ndarray, input_ids: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        feed = {"input_ids": input_ids, "encoder_hidden_states": states, **self._mask(states, mask)}
        (logits,) = self.decoder.run(["logits"], feed)
        return logits

    def first_step(self, states: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, dict]:
        ids = np.full((len(states), 1), self.start_id, dtype=np.int64)
        feed = {"input_ids": ids, "encoder_hidden_states": states, **self._mask(states, mask)}
        return self._step(self.decoder, feed, {})

    def next_step(self, tokens: np.ndarray, cache: dict, mask: np.ndarray | None) -> tuple[np.ndarray, dict]:
        feed = {"input_ids": tokens[:, None], **{k: cache[k] for k in self.past_names}}
        if self.masks_encoder:
            feed[ENCODER_MASK] = cache[ENCODER_MASK]
        return self._step(self.decoder_past, feed, cache)

    def select(self, cache: dict, rows: np.ndarray) -> dict:
        if rows[-1] == len(rows) - 1:  # increasing rows ending at len - 1: a prefix, kept as a view
            return {name: value[: len(rows)] for name, value in cache.items()}
        return {name: value[rows] for name, value in cache.items()}

    def _mask(self, states: np.ndarray, mask: np.ndarray | None) -> dict[str, np.ndarray]:
        """The mask input the decoder graphs take (all ones without padding); none for older exports."""
        if not self.masks_encoder:
            if mask is not None and not mask.all():
                raise ValueError("this export has no cross-attention mask: re-export it to pad lines")
            return {}
        return {ENCODER_MASK: np.ones(states.shape[:2], np.int64) if mask is None else mask}

    def _step(self, session, feed: dict, cache: dict) -> tuple[np.ndarray, dict]:
        """Run one decoder graph; (last-position logits, the cache with its new keys and values)."""
        outputs = session.run(None, feed)
        named = dict(zip([o.name for o in session.get_outputs()], outputs, strict=True))
        cache = {
            **cache,
            **{
                f"past_key_values{k[len('present') :]}": v
                for k, v in named.items()
                if k.startswith("present")
            },
        }
        if ENCODER_MASK in feed:
            cache[ENCODER_MASK] = feed[ENCODER_MASK]
        return named["logits"][:, -1], cache
