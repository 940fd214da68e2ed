"""Torch-free line recognizer: Optimum-exported encoder + KV-cache decoder (greedy), CTC head, or both
rescored (joint), in numpy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ocrkit.decode.ctc import Decoding, log_softmax
from ocrkit.decode.read import read_crops
from ocrkit.errors import ModelError
from ocrkit.model_folder import check_folder, chosen_decoding, load_ctc_head
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
        self.patch = int(config["encoder"]["patch_size"])
        self.decoding = chosen_decoding(spec, decoding, folder)
        self.ctc_head = load_ctc_head(folder, spec) if self.decoding.reads_head else None
        self.joint = spec.joint_settings() if self.decoding is Decoding.JOINT else None
        self.max_positions = int(config["decoder"]["max_position_embeddings"])
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise ModelError(folder, "tokenizer.json is missing")
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.encoder = create_session(folder / "encoder_model.onnx", threads, opt_level)
        if self.decoding is Decoding.CTC:
            return  # the CTC head reads the encoder's output: no decoder sessions needed
        self.decoder = create_session(folder / "decoder_model.onnx", threads, opt_level)
        self.decoder_past = create_session(folder / "decoder_with_past_model.onnx", threads, opt_level)
        self.past_names = [
            i.name for i in self.decoder_past.get_inputs() if i.name.startswith("past_key_values")
        ]

    def recognize(self, crops: list[np.ndarray], batch_size: int = 16) -> list[tuple[str, float]]:
        readings = read_crops(self, self.prep, crops, self.decoding, self.joint, batch_size)
        return [(self.tokenizer.decode(ids, skip_special_tokens=True), conf) for ids, conf in readings]

    # -- ocrkit.decode.read.RecognizerBackend ---------------------------------------------------------
    def encode(self, pixels: np.ndarray) -> np.ndarray:
        (hidden,) = self.encoder.run(["last_hidden_state"], {"pixel_values": pixels})
        return hidden

    def ctc_logits(self, states: np.ndarray, pixel_shape: tuple[int, int]) -> np.ndarray:
        return self.ctc_head.logits(states, pixel_shape, self.patch)

    def score(self, states: np.ndarray, input_ids: np.ndarray) -> np.ndarray:
        (logits,) = self.decoder.run(["logits"], {"input_ids": input_ids, "encoder_hidden_states": states})
        return logits

    def greedy(self, hidden: np.ndarray, max_new_tokens: int) -> tuple[list[list[int]], list[float]]:
        """KV-cache greedy decoding → (token ids without </s>, exp(mean token log-prob, </s> included))."""
        n = hidden.shape[0]
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
        for _ in range(max_new_tokens):
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
