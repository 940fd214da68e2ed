"""RecognitionTask: the recognizer side of the shared training engine (ocrkit.engine.task.Task).

Loss: token cross-entropy SUMMED over non-ignored label tokens; `units` counts those tokens, and the
engine divides by the token count of the whole accumulated step, so a long line weighs per character,
not per line. Label smoothing stays off by default: with a from-scratch character decoder it flattens
the next-token distribution the model relies on early in training, and TrOCR fine-tunes have been seen
to diverge or plateau with it; greedy decoding confidence also becomes less meaningful.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load_model
from torch.utils.data import Dataset, Sampler
from transformers import VisionEncoderDecoderModel
from transformers.models.vision_encoder_decoder.modeling_vision_encoder_decoder import shift_tokens_right

from ocrkit.data.lines_dataset import LinesDataset
from ocrkit.data.sampler import AspectRatioBatchSampler
from ocrkit.decode.ctc import DECODINGS, Decoding
from ocrkit.decode.joint import JointSettings
from ocrkit.decode.read import read, read_all
from ocrkit.engine.param_groups import param_groups
from ocrkit.hub.model_folder import (
    CTC_HEAD_FILE,
    SETTINGS_NAME,
    RecognizerSpec,
    read_spec,
    setting_names,
    settings_of,
    spec_from_settings,
    write_spec,
)
from ocrkit.images.buckets import same_shape_batches
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.recognition.case_folding import case_partners, fold_cases
from ocrkit.recognition.collate import IGNORE, LineCollator
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.ctc import (
    HEAD,
    add_ctc_head,
    ctc_loss,
    head_arrays,
    restore_head,
    save_head,
)
from ocrkit.recognition.metrics import ErrorCounts
from ocrkit.recognition.model import PATCH, create_recognizer
from ocrkit.recognition.tokenizer import (
    build_tokenizer,
    decode,
    describe_unknown,
    load_tokenizer,
    unknown_characters,
    with_characters,
)
from ocrkit.recognition.torch_backend import TorchBackend

_NO_DECAY = ("bias", "norm", "position_embeddings", "cls_token", "embed_positions", "embed_tokens")


class RecognitionTask:
    def __init__(self, config: RecognizerConfig) -> None:
        self.config = config
        d, m = config.data, config.model
        self.preprocess = LinePreprocess(
            longest=d.longest,
            divisor=PATCH,
            max_height=d.max_height,
            grayscale=d.grayscale,
            pad_value=d.pad_value,
        )
        self.tokenizer = with_characters(_tokenizer_for(m.pretrained), m.extra_chars)
        self.collator = LineCollator(self.preprocess, self.tokenizer, m.max_target_length)
        self._val: LinesDataset | None = None
        self._parts: defaultdict[str, float] = defaultdict(float)
        self._case_partners: torch.Tensor | None = None

    # -- model and data -------------------------------------------------------------------------------
    def build_model(self) -> VisionEncoderDecoderModel:
        m = self.config.model
        model = create_recognizer(
            m.size,
            pretrained=m.pretrained or None,
            tokenizer=self.tokenizer,
            image_size=self.config.data.longest,
            max_target_length=m.max_target_length,
            dropout=m.dropout,
        )
        if m.ctc_weight > 0:
            add_ctc_head(model, model.decoder.config.vocab_size, m.ctc_frames_per_patch)
            if m.pretrained and (Path(m.pretrained) / CTC_HEAD_FILE).is_file():
                # continuing from a saved folder keeps its trained head (grown for extra characters)
                restore_head(model, m.pretrained, new_labels=bool(m.extra_chars))
        if m.init_weights:
            load_model(model, m.init_weights, strict=False)  # a checkpoint may lack (or have) the CTC head
        return model.train()

    def train_dataset(self) -> LinesDataset:
        dataset = LinesDataset(
            self.config.data.train,
            augment=self.config.data.augment,
            scan_augment_p=self.config.data.scan_augment,
            max_chars=min(self.config.data.max_chars or 10**9, self.config.model.max_target_length - 1),
            epoch_lines=self.config.data.epoch_lines,
            glue_share=self.config.data.glue_share,
            box_jitter=self.config.data.box_jitter,
            frame_share=self.config.data.frame_share,
        )
        unknown, lines = unknown_characters((r["text"] for r in dataset.records), self.tokenizer)
        if unknown:
            print(describe_unknown(unknown, lines), flush=True)
        return dataset

    def collate(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return self.collator(items)

    def batch_sampler(self, dataset: Dataset, batch_size: int, seed: int) -> Sampler | None:
        if not self.config.data.bucketing or not isinstance(dataset, LinesDataset):
            return None
        return AspectRatioBatchSampler(self.padded_shapes(dataset), batch_size, seed)

    def padded_shapes(self, dataset: LinesDataset) -> list[tuple[int, int]]:
        """Letterboxed (H, W) per line, from the crop sizes alone (for bucketing)."""
        return [self.preprocess.padded_shape(h, w, fit_width=True) for h, w in dataset.image_sizes()]

    # -- loss -----------------------------------------------------------------------------------------
    def units(self, batch: dict[str, Any]) -> int:
        return int((batch["labels"] != IGNORE).sum())

    def loss(self, model: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        labels = batch["labels"]
        device = next(model.parameters()).device
        labels = labels.to(device)
        cfg = _unwrap(model).config
        decoder_input_ids = shift_tokens_right(labels, cfg.pad_token_id, cfg.decoder_start_token_id)
        pixel_values = batch["pixel_values"].to(device)
        out = model(
            pixel_values=pixel_values, decoder_input_ids=decoder_input_ids, interpolate_pos_encoding=True
        )
        case_free = batch.get("case_free")
        folding = None
        if case_free is not None and bool(case_free.any()):
            folding = (self._partners(out.logits.shape[-1]), case_free.to(device))
        logits = out.logits.float()
        if folding is None:
            loss = F.cross_entropy(
                logits.flatten(0, 1),
                labels.flatten(),
                ignore_index=IGNORE,
                reduction="sum",
                label_smoothing=self.config.model.label_smoothing,
            )
        else:  # the same summed NLL, each cased target scored as upper-or-lower on case-free rows
            log_probs = fold_cases(F.log_softmax(logits, dim=-1), *folding)
            loss = F.nll_loss(log_probs.flatten(0, 1), labels.flatten(), ignore_index=IGNORE, reduction="sum")
        units = self.units(batch)
        self._parts["ce"] += float(loss.detach())
        self._parts["units"] += units
        if self.config.model.ctc_weight > 0:
            aux = ctc_loss(
                _unwrap(model),
                out.encoder_last_hidden_state,
                tuple(pixel_values.shape[-2:]),
                labels,
                cfg.eos_token_id,
                cfg.pad_token_id,
                IGNORE,
                case_free=folding,
            )
            self._parts["ctc"] += float(aux.detach())
            loss = loss + self.config.model.ctc_weight * aux
        return loss

    def _partners(self, vocab_size: int) -> torch.Tensor:
        if self._case_partners is None or self._case_partners.numel() != vocab_size:
            self._case_partners = case_partners(self.tokenizer, vocab_size)
        return self._case_partners

    def pop_loss_parts(self) -> dict[str, float]:
        """Per-token cross-entropy (and CTC) since the last call: shows whether the encoder is used yet."""
        parts, self._parts = self._parts, defaultdict(float)
        units = parts.pop("units", 0.0)
        return {f"{k}_per_token": v / units for k, v in parts.items()} if units else {}

    def param_groups(self, model: torch.nn.Module, lr: float, weight_decay: float) -> list[dict]:
        """Encoder at lr × backbone_lr_mult; no weight decay on biases, norms, embeddings."""
        return param_groups(
            model,
            lr,
            weight_decay,
            lambda name: name.startswith("encoder."),
            self.config.train.backbone_lr_mult,
            no_decay_names=_NO_DECAY,
            by_setting=True,
        )

    # -- evaluation and export ------------------------------------------------------------------------
    def val_dataset(self) -> LinesDataset:
        if self._val is None:
            d = self.config.data
            self._val = LinesDataset(d.val, augment=False, limit=d.val_limit)
        return self._val

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        """Greedy CER / WER on the validation manifest (case_sensitive: false records compared lower-case)
        with the configured decoding; with a CTC head, every decoding is scored (cer_attention, cer_ctc,
        cer_joint) from one encoder pass."""
        data = self.val_dataset()
        model = _unwrap(model)
        head = head_arrays(model)
        m = self.config.model
        joint = JointSettings(m.joint_ctc_weight, alternatives=m.joint_alternatives)  # ungated: read all
        names = ("attention",) if head is None else DECODINGS
        counts = {name: ErrorCounts() for name in names}
        backend = TorchBackend(model, head)
        for batch_ids in same_shape_batches(self.padded_shapes(data), self.config.data.eval_batch_size):
            pixels = self.collate([data[i] for i in batch_ids])["pixel_values"].numpy()
            if head is None:
                found = {"attention": read(backend, pixels, "attention")}
            else:
                found = read_all(backend, pixels, joint)
            readings = {
                name: [(decode(self.tokenizer, ids), conf) for ids, conf in decoded]
                for name, decoded in found.items()
            }
            for name in names:
                for i, (text, _) in zip(batch_ids, readings[name], strict=True):
                    rec = data.records[i]
                    counts[name].add(
                        rec["text"], text, case_sensitive=rec.get("case_sensitive", True) is not False
                    )
        chosen = counts[self.config.model.decoding]
        metrics = {"cer": chosen.cer, "wer": chosen.wer}
        if head is not None:
            metrics.update({f"cer_{name}": c.cer for name, c in counts.items()})
        return metrics

    def save_pretrained(self, model: torch.nn.Module, out_dir: Path) -> None:
        """HF folder (config.json, model.safetensors, generation config, tokenizer files) + the settings."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        net = _unwrap(model)
        weights = {k: v for k, v in net.state_dict().items() if not k.startswith(HEAD)}  # head: own file
        net.save_pretrained(out_dir, state_dict=weights, safe_serialization=True)
        save_head(net, out_dir)
        self.tokenizer.save_pretrained(out_dir)
        m = self.config.model
        spec = RecognizerSpec(
            self.preprocess,
            size=m.size,
            max_target_length=m.max_target_length,
            decoding=Decoding(m.decoding),
            joint_ctc_weight=m.joint_ctc_weight,
            joint_gate=m.joint_gate,
            joint_alternatives=m.joint_alternatives,
            ctc_frames_per_patch=m.ctc_frames_per_patch,
            decoder_max_chars=m.decoder_max_chars,
            decoder_gate=m.decoder_gate,
        )
        write_spec(out_dir, inherit_settings(spec, m.pretrained, out_dir))


# settings a training run never sets: reading choices of the start folder (windows for wide lines, a
# confidence cut), kept in what the run saves so a fine-tune reads as its start did
START_ONLY_SETTINGS = (
    "windowed",
    "trim_margins",
    "trim_crowded",
    "grow_cut_ends",
    "read_stray_print",
    "decoder_needs_letters",
    "min_confidence",
)


def inherit_settings(spec: RecognizerSpec, start: str, out_dir: Path) -> RecognizerSpec:
    """`spec` with the start folder's settings that the run does not own (START_ONLY_SETTINGS and keys
    this ocrkit does not know), when the run started from an ocrkit folder."""
    if not start or not (Path(start) / SETTINGS_NAME).is_file():
        return spec
    begun = settings_of(read_spec(start, "recognizer"))
    own = settings_of(spec)
    kept = {k: v for k, v in begun.items() if k in START_ONLY_SETTINGS or k not in setting_names(spec)}
    return spec_from_settings({**own, **kept}, out_dir)


def _tokenizer_for(pretrained: str):
    """Ours for random init or a folder without tokenizer files; otherwise the checkpoint's own."""
    folder = Path(pretrained)
    if not pretrained or (folder.is_dir() and not (folder / "tokenizer_config.json").is_file()):
        return build_tokenizer()
    return load_tokenizer(pretrained)


def _unwrap(model: torch.nn.Module) -> VisionEncoderDecoderModel:
    return getattr(model, "module", model)
