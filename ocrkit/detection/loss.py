"""CIoU matching and box loss for D-FINE / RT-DETR, plugged in through `model.loss_function`.

We subclass transformers' criteria (`RTDetrLoss`, `DFineLoss`) and matcher and replace only the
GIoU parts. The glue that turns model outputs into the criterion's input is our own because
transformers 4.57.6 also matches the denoising queries of the last decoder layer against the
ground truth (its `logits`/`pred_boxes` still contain them during training): those queries are
noised copies of the targets, so they steal matches from the real queries. We drop them from the
main and auxiliary outputs and supervise them only through the denoising loss, as the papers do.

The encoder's top-k proposals can be supervised one-to-many (`encoder_positives` > 1): each line is
matched to up to that many proposals. The proposals only seed the decoder queries, so duplicates there
cost nothing at inference, while more positives per line give short lines more chances to be among
the proposals at all (the idea behind the one-to-many branches of H-DETR and DEIM, at no extra queries).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from transformers import PretrainedConfig
from transformers.image_transforms import center_to_corners_format
from transformers.loss.loss_d_fine import DFineLoss
from transformers.loss.loss_rt_detr import RTDetrHungarianMatcher, RTDetrLoss

from ocrkit.detection.ciou import ciou, ciou_loss


class CIoUHungarianMatcher(RTDetrHungarianMatcher):
    """Hungarian matching with cost = class + L1 + CIoU (instead of GIoU); same config weights."""

    @torch.no_grad()
    def forward(self, outputs: dict, targets: list[dict]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        logits, boxes = outputs["logits"], outputs["pred_boxes"]
        batch, queries = logits.shape[:2]
        sizes = [len(t["boxes"]) for t in targets]
        empty = torch.zeros(0, dtype=torch.int64)
        if sum(sizes) == 0:
            return [(empty, empty) for _ in targets]
        labels = torch.cat([t["class_labels"] for t in targets])
        target_boxes = torch.cat([t["boxes"] for t in targets]).to(boxes.dtype)

        flat_logits = logits.flatten(0, 1).float()
        if self.use_focal_loss:
            prob = flat_logits.sigmoid()[:, labels]
            # focal-weighted cost of calling this query positive minus that of calling it background
            positive = self.alpha * (1 - prob) ** self.gamma * -(prob + 1e-8).log()
            negative = (1 - self.alpha) * prob**self.gamma * -(1 - prob + 1e-8).log()
            class_cost = positive - negative
        else:
            class_cost = -flat_logits.softmax(-1)[:, labels]

        flat_boxes = boxes.flatten(0, 1).float()
        l1_cost = torch.cdist(flat_boxes, target_boxes.float(), p=1)
        ciou_cost = -ciou(
            center_to_corners_format(flat_boxes)[:, None],
            center_to_corners_format(target_boxes.float())[None],
        )
        cost = self.class_cost * class_cost + self.bbox_cost * l1_cost + self.giou_cost * ciou_cost
        cost = torch.nan_to_num(cost, nan=1e8, posinf=1e8, neginf=1e8).view(batch, queries, -1).cpu()

        result = []
        for i, block in enumerate(cost.split(sizes, -1)):
            rows, cols = linear_sum_assignment(block[i].numpy())
            result.append(
                (torch.as_tensor(rows, dtype=torch.int64), torch.as_tensor(cols, dtype=torch.int64))
            )
        return result


class _CIoUBoxTerms:
    """Mixin for transformers' DETR criteria: L1 + CIoU box loss, CIoU matcher, `loss_ciou` key."""

    def _use_ciou(self, config: PretrainedConfig) -> None:
        self.matcher = CIoUHungarianMatcher(config)
        self.weight_dict.pop("loss_giou")
        self.weight_dict["loss_ciou"] = config.weight_loss_giou

    def loss_boxes(self, outputs: dict, targets: list[dict], indices: list, num_boxes: float) -> dict:
        idx = self._get_source_permutation_idx(indices)
        pred = outputs["pred_boxes"][idx]
        target = torch.cat([t["boxes"][j] for t, (_, j) in zip(targets, indices, strict=True)]).to(pred.dtype)
        return {
            "loss_bbox": F.l1_loss(pred, target, reduction="sum") / num_boxes,
            "loss_ciou": ciou_loss(center_to_corners_format(pred), center_to_corners_format(target)).sum()
            / num_boxes,
        }


class CIoURTDetrLoss(_CIoUBoxTerms, RTDetrLoss):
    """RT-DETR / RT-DETRv2 criterion (VFL + L1 + CIoU)."""

    def __init__(self, config: PretrainedConfig) -> None:
        super().__init__(config)
        self._use_ciou(config)


class CIoUDFineLoss(_CIoUBoxTerms, DFineLoss):
    """D-FINE criterion (VFL + L1 + CIoU + FGL + DDF)."""

    def __init__(self, config: PretrainedConfig) -> None:
        super().__init__(config)
        self._use_ciou(config)


def _without_denoising(tensor: torch.Tensor | None, meta: dict | None, dim: int) -> tuple[Any, Any]:
    """(denoising part, regular part) along the query dimension; no denoising → (None, tensor)."""
    if tensor is None or meta is None:
        return None, tensor
    dn, regular = torch.split(tensor, meta["dn_num_split"], dim=dim)
    return dn, regular


def _per_layer(
    classes: torch.Tensor, coords: torch.Tensor, corners: torch.Tensor | None, refs: torch.Tensor | None
) -> list[dict]:
    """Decoder stacks [B, L, Q, …] → one output dict per prediction, deepest last.

    D-FINE stacks one extra class/box prediction in front (the pre-refinement head, which has no
    corner distribution); it is supervised like an auxiliary layer without FGL/DDF. The refined
    layers get the last layer as distillation teacher (the last layer's own DDF term is zero).
    """
    layers = []
    if corners is not None:
        extra = classes.shape[1] - corners.shape[1]
        layers += [{"logits": classes[:, i], "pred_boxes": coords[:, i].clamp(0, 1)} for i in range(extra)]
        classes, coords = classes[:, extra:], coords[:, extra:]
    for i in range(classes.shape[1]):
        out = {"logits": classes[:, i], "pred_boxes": coords[:, i].clamp(0, 1)}
        if corners is not None:
            out.update(
                pred_corners=corners[:, i],
                ref_points=refs[:, i],
                teacher_corners=corners[:, -1],
                teacher_logits=classes[:, -1],
            )
        layers.append(out)
    return layers


def repeat_targets(targets: list[dict], times: int, slots: int) -> list[dict]:
    """Each image's targets repeated up to `times`, but never beyond `slots` targets in all (Hungarian
    matching needs at least as many predictions as targets)."""
    repeated = []
    for t in targets:
        k = max(1, min(times, slots // max(len(t["boxes"]), 1)))
        repeated.append({"class_labels": t["class_labels"].repeat(k), "boxes": t["boxes"].repeat(k, 1)})
    return repeated


def encoder_losses(criterion: Any, proposals: dict, targets: list[dict], positives: int) -> dict:
    """Class and box losses of the encoder's top-k proposals, each line matched to up to `positives` of
    them; keys end in `_enc`, weights as for the decoder layers."""
    targets = repeat_targets(targets, positives, proposals["logits"].shape[1])
    indices = criterion.matcher(proposals, targets)
    num_boxes = max(sum(len(t["boxes"]) for t in targets), 1)
    losses = {}
    for name in criterion.losses:
        if name == "local":  # D-FINE's corner terms need the decoder's distributions
            continue
        for key, value in criterion.get_loss(name, proposals, targets, indices, num_boxes).items():
            if key in criterion.weight_dict:
                losses[f"{key}_enc"] = value * criterion.weight_dict[key]
    return losses


class CIoUDetrLoss:
    """Callable with the signature transformers' DETR models use for `self.loss_function`.

    A plain object (not an nn.Module) so that assigning it to the model adds nothing to its
    state_dict. The criterion is built once, on first use, for the model's config.
    """

    def __init__(self, config: PretrainedConfig, encoder_positives: int = 1) -> None:
        if encoder_positives < 1:
            raise ValueError(f"encoder_positives must be >= 1, got {encoder_positives}")
        kind = CIoUDFineLoss if config.model_type == "d_fine" else CIoURTDetrLoss
        self.criterion = kind(config)
        self.encoder_positives = encoder_positives

    def __call__(
        self,
        logits: torch.Tensor,
        labels: list[dict],
        device: torch.device,
        pred_boxes: torch.Tensor,
        config: PretrainedConfig,
        outputs_class: torch.Tensor | None = None,
        outputs_coord: torch.Tensor | None = None,
        enc_topk_logits: torch.Tensor | None = None,
        enc_topk_bboxes: torch.Tensor | None = None,
        denoising_meta_values: dict | None = None,
        predicted_corners: torch.Tensor | None = None,
        initial_reference_points: torch.Tensor | None = None,
        **_: Any,
    ) -> tuple:
        criterion = self.criterion.to(device)
        meta = denoising_meta_values
        if outputs_class is None or not config.auxiliary_loss:
            _, logits = _without_denoising(logits, meta, 1)
            _, pred_boxes = _without_denoising(pred_boxes, meta, 1)
            loss_dict = criterion({"logits": logits, "pred_boxes": pred_boxes.clamp(0, 1)}, labels)
            return sum(loss_dict.values()), loss_dict, None

        dn_class, classes = _without_denoising(outputs_class, meta, 2)
        dn_coord, coords = _without_denoising(outputs_coord, meta, 2)
        dn_corners, corners = _without_denoising(predicted_corners, meta, 2)
        dn_refs, refs = _without_denoising(initial_reference_points, meta, 2)

        layers = _per_layer(classes, coords, corners, refs)
        outputs = dict(layers[-1])
        outputs["auxiliary_outputs"] = layers[:-1]
        if meta is not None:
            outputs["dn_auxiliary_outputs"] = _per_layer(dn_class, dn_coord, dn_corners, dn_refs)
            outputs["denoising_meta_values"] = meta
        loss_dict = criterion(outputs, labels)
        if enc_topk_logits is not None:
            proposals = {"logits": enc_topk_logits, "pred_boxes": enc_topk_bboxes.clamp(0, 1)}
            loss_dict.update(encoder_losses(criterion, proposals, labels, self.encoder_positives))
        return sum(loss_dict.values()), loss_dict, layers[:-1]


def install_ciou_loss(model: torch.nn.Module, encoder_positives: int = 1) -> torch.nn.Module:
    """Make a transformers D-FINE / RT-DETR(v2) model train with the CIoU criterion; returns it.

    encoder_positives: encoder proposals each line is matched to (1 = one-to-one, as the papers)."""
    model.loss_function = CIoUDetrLoss(model.config, encoder_positives)
    return model
