"""Torch-free line recognizer: Optimum-exported encoder + KV-cache decoder (greedy), CTC head, or both
rescored (joint), in numpy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ocrkit.blas import single_thread_blas
from ocrkit.errors import ModelError
from ocrkit.model_folder import check_folder
from ocrkit.recognition.buckets import same_shape_batches
from ocrkit.recognition.ctc_decoding import (
    HEAD_DECODINGS,
    best_path,
    ctc_decode,
    frame_logits,
    load_head,
    log_softmax,
    model_decoding,
)
from ocrkit.recognition.joint import (
    choose,
    joint_candidates,
    model_joint_settings,
    sequence_logprobs,
    teacher_forcing_batch,
)
from ocrkit.runtime.session import create_session


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
        self.prep = spec.preprocess
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.start_id = int(config["decoder_start_token_id"])
        self.eos_id = int(config["eos_token_id"])
        self.blank_id = int(config.get("pad_token_id", config["decoder"]["pad_token_id"]))
        decoding = model_decoding(folder, decoding)
        self.ctc_head = load_head(folder) if decoding in HEAD_DECODINGS else None
        self.joint = model_joint_settings(folder) if decoding == "joint" else None
        # the same token budget as ocrkit.recognition.decoding.max_new_tokens_for
        self.chars_per_patch = 3.0 if spec.chars_per_patch is None else spec.chars_per_patch
        self.max_positions = int(config["decoder"]["max_position_embeddings"])
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise ModelError(folder, "tokenizer.json is missing")
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.encoder = create_session(folder / "encoder_model.onnx", threads, opt_level)
        if decoding == "ctc":
            return  # the CTC head reads the encoder's output: no decoder sessions needed
        self.decoder = create_session(folder / "decoder_model.onnx", threads, opt_level)
        self.decoder_past = create_session(folder / "decoder_with_past_model.onnx", threads, opt_level)
        self.past_names = [
            i.name for i in self.decoder_past.get_inputs() if i.name.startswith("past_key_values")
        ]

    def recognize(self, crops: list[np.ndarray], batch_size: int = 16) -> list[tuple[str, float]]:
        images = [self.prep.apply(c) for c in crops]
        results: list[tuple[str, float]] = [("", 0.0)] * len(images)
        with single_thread_blas():
            for batch in same_shape_batches([im.shape[:2] for im in images], batch_size):
                pixels = self.prep.batch([images[i] for i in batch])
                for i, res in zip(batch, self._decode(pixels), strict=True):
                    results[i] = res
        return results

    def _decode(self, pixels: np.ndarray) -> list[tuple[str, float]]:
        (hidden,) = self.encoder.run(["last_hidden_state"], {"pixel_values": pixels})
        if self.ctc_head is not None and self.joint is None:
            decoded = ctc_decode(hidden, pixels.shape[2:], *self.ctc_head, self.blank_id, self.prep.divisor)
            return [(self._text(ids), conf) for ids, conf in decoded]
        if self.joint is None:
            tokens, confidences = self._greedy(hidden, pixels.shape[3])
            return [(self._text(ids), conf) for ids, conf in zip(tokens, confidences, strict=True)]
        logits = frame_logits(hidden, pixels.shape[2:], *self.ctc_head, self.prep.divisor)
        picked = best_path(logits, self.blank_id)
        unsure = self.joint.unsure([conf for _, conf in picked])
        if unsure:
            rescored = self._rescore(
                hidden[unsure], logits[unsure], [picked[i][0] for i in unsure], pixels.shape[3]
            )
            for i, pick in zip(unsure, rescored, strict=True):
                picked[i] = pick
        return [(self._text(ids), conf) for ids, conf in picked]

    def _rescore(
        self, hidden: np.ndarray, logits: np.ndarray, ctc_ids: list[list[int]], width: int
    ) -> list[tuple[list[int], float]]:
        """Greedy decoder reading, the CTC reading and CTC's second choices, all scored by both models
        (recognition.joint)."""
        tokens, _ = self._greedy(hidden, width)
        frames = log_softmax(logits.astype(np.float64))
        candidates = joint_candidates(frames, ctc_ids, tokens, self.blank_id, self.joint.alternatives)
        inputs, targets, mask, owners = teacher_forcing_batch(
            candidates, self.start_id, self.eos_id, self.blank_id, self.max_positions
        )
        feed = {"input_ids": inputs, "encoder_hidden_states": hidden[owners]}
        (scored,) = self.decoder.run(["logits"], feed)
        attention = sequence_logprobs(scored, targets, mask, owners, len(candidates))
        return choose(frames, candidates, attention, self.blank_id, self.joint.ctc_weight)

    def _text(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _greedy(self, hidden: np.ndarray, width: int) -> tuple[list[list[int]], list[float]]:
        """KV-cache greedy decoding → (token ids without </s>, exp(mean token log-prob, </s> included))."""
        n = hidden.shape[0]
        budget = math.ceil(width / self.prep.divisor * self.chars_per_patch) + 2
        max_new = max(2, min(budget, self.max_positions - 1))
        ids = np.full((n, 1), self.start_id, dtype=np.int64)
        outputs = self.decoder.run(None, {"input_ids": ids, "encoder_hidden_states": hidden})
        names = [o.name for o in self.decoder.get_outputs()]
        present = dict(zip(names, outputs, strict=True))
        past = {
            f"past_key_values{k[len('present') :]}": v for k, v in present.items() if k.startswith("present")
        }
        logits = present["logits"][:, -1]
        tokens: list[list[int]] = [[] for _ in range(n)]
        logprob = np.zeros(n, dtype=np.float64)
        done = np.zeros(n, dtype=bool)
        for _ in range(max_new):
            lp = log_softmax(logits.astype(np.float64))
            nxt = lp.argmax(-1)
            for b in np.nonzero(~done)[0]:
                logprob[b] += lp[b, nxt[b]]
                if nxt[b] == self.eos_id:
                    done[b] = True
                else:
                    tokens[b].append(int(nxt[b]))
            if done.all():
                break
            feed = {"input_ids": nxt[:, None].astype(np.int64), **{k: past[k] for k in self.past_names}}
            outputs = self.decoder_past.run(None, feed)
            step = dict(zip([o.name for o in self.decoder_past.get_outputs()], outputs, strict=True))
            for k, v in step.items():
                if k.startswith("present"):
                    past[f"past_key_values{k[len('present') :]}"] = v
            logits = step["logits"][:, -1]
        counts = [len(tokens[b]) + (1 if done[b] else 0) for b in range(n)]
        return tokens, [float(np.exp(logprob[b] / max(1, counts[b]))) for b in range(n)]
