"""DetectionTask: the line detector as a Task for the shared training engine."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import Dataset, Sampler

from ocrkit.data.coco_dataset import AugmentConfig, CocoDetectionDataset
from ocrkit.data.mixing import MixtureDataset, parse_sources
from ocrkit.data.sampler import AspectRatioBatchSampler
from ocrkit.detection.batch import collate_pages
from ocrkit.detection.config import DetectorConfig
from ocrkit.detection.factory import create_detector
from ocrkit.detection.metrics import LineCounts, coco_map
from ocrkit.detection.predictor import raw_outputs
from ocrkit.engine.param_groups import param_groups
from ocrkit.hub.model_folder import DetectorSpec, write_spec
from ocrkit.images.postprocess import postprocess

MAP_SCORE_THRESHOLD = 0.01  # mAP ranks all detections; P/R/F1 uses the configured threshold


class DetectionTask:
    def __init__(self, config: DetectorConfig) -> None:
        self.cfg = config
        self._val: CocoDetectionDataset | None = None

    # -- model ----------------------------------------------------------------------------------
    def build_model(self) -> torch.nn.Module:
        m = self.cfg.model
        overrides = dict(m.extra)
        if m.decoder_layers:
            overrides["decoder_layers"] = m.decoder_layers
        model = create_detector(
            m.arch,
            m.size,
            m.num_queries,
            m.num_denoising,
            m.pretrained or None,
            m.encoder_positives,
            **overrides,
        )
        return model.to(memory_format=self._memory_format())

    def _memory_format(self) -> torch.memory_format:
        return torch.channels_last if self.cfg.model.channels_last else torch.contiguous_format

    def param_groups(self, model: torch.nn.Module, lr: float, weight_decay: float) -> list[dict]:
        """Backbone at lr × backbone_lr_mult; no weight decay on norms, biases and other 1-D tensors."""
        mult = self.cfg.train.backbone_lr_mult
        return param_groups(model, lr, weight_decay, lambda name: ".backbone." in f".{name}", mult)

    # -- data -----------------------------------------------------------------------------------
    def _dataset(self, ann_file: str, augment: AugmentConfig | None, limit: int = 0) -> CocoDetectionDataset:
        d = self.cfg.data
        return CocoDetectionDataset(ann_file, d.sizing, augment, limit)

    def train_dataset(self) -> Dataset:
        d = self.cfg.data
        if not d.train:
            raise ValueError("data.train: no training COCO file configured")
        sources = parse_sources(d.train, "data.train")
        if len(sources) == 1 and not d.epoch_pages:
            return self._dataset(sources[0][0], d.augment)
        return MixtureDataset([(self._dataset(path, d.augment), w) for path, w in sources], d.epoch_pages)

    def val_dataset(self) -> CocoDetectionDataset:
        if self._val is None:
            self._val = self._dataset(self.cfg.data.val, None, self.cfg.data.val_limit)
        return self._val

    def collate(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_pages(items)

    def batch_sampler(self, dataset: Dataset, batch_size: int, seed: int) -> Sampler | None:
        """Page-shaped input: batches of pages of similar aspect. Inference reads each page in its own
        frame, and the model's boxes are normalised per axis to the frame, so a receipt padded to a
        batch's near-square frame would teach a box mapping inference never sees. Square input: None."""
        if self.cfg.data.square:
            return None
        return AspectRatioBatchSampler(dataset.page_sizes(), batch_size, seed)

    def units(self, batch: dict[str, Any]) -> int:
        return len(batch["labels"])

    # -- training / evaluation ------------------------------------------------------------------
    def loss(self, model: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        """HF's loss is a per-box mean over the batch; × images gives the engine its summed loss."""
        device = next(model.parameters()).device
        labels = [{k: v.to(device) for k, v in lab.items()} for lab in batch["labels"]]
        pixels = batch["pixel_values"].to(device).contiguous(memory_format=self._memory_format())
        out = model(pixel_values=pixels, labels=labels)
        return out.loss * len(labels)

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        """mAP / mAP50 (COCO) and line P/R/F1 at IoU 0.5 after post-processing, on data.val."""
        if not self.cfg.data.val:
            return {}
        data = self.val_dataset()
        post = self.cfg.post
        loose = replace(post, score_threshold=min(post.score_threshold, MAP_SCORE_THRESHOLD))
        counts, detections = LineCounts(), {}
        # page-shaped input is read one page per pass, in its own frame, as inference reads it
        step = self.cfg.data.eval_batch_size if self.cfg.data.square else 1
        for start in range(0, len(data), step):
            batch = self.collate([data[i] for i in range(start, min(start + step, len(data)))])
            logits, boxes = raw_outputs(model, batch["pixel_values"])
            for lg, bx, geom, image_id in zip(
                logits, boxes, batch["geometry"], batch["image_id"], strict=True
            ):
                detections[image_id] = postprocess(lg, bx, geom, loose)
                counts.add(postprocess(lg, bx, geom, post)[0], data.boxes_xyxy(image_id))
        return {**coco_map(data.coco, detections), **counts.scores()}

    def save_pretrained(self, model: torch.nn.Module, out_dir: Path) -> None:
        """HF folder (config.json + model.safetensors) + the settings with the training preprocessing."""
        out_dir = Path(out_dir)
        model.save_pretrained(out_dir, safe_serialization=True)
        d = self.cfg.data
        arch = model.config.model_type
        post = replace(self.cfg.post)
        spec = DetectorSpec(d.sizing, arch, post)
        write_spec(out_dir, spec)
