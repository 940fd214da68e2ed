"""Detector → ONNX with the whole post-processing inside the graph.

Graph: pixel_values [1, 3, H, W] in [0, 1] → sigmoid → top-k → score threshold → NonMaxSuppression →
drop boxes mostly inside a higher-scoring box → boxes [N, 4] xyxy in input pixels, scores [N]. H and W
are dynamic for page-shaped models (`square: false`), fixed for square ones. The runtime only letterboxes
before and unmaps (shared `Geometry`) after.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch
import torchvision

from ocrkit.export.quiet import carry_card, quiet_export
from ocrkit.hub.model_folder import read_spec, write_spec
from ocrkit.images.boxes import SAME_LINE_HEIGHT
from ocrkit.images.postprocess import PostConfig

OPSET = 17
ONNX_NAME = "detector.onnx"


class DetectorWithPostprocess(torch.nn.Module):
    """Wraps a transformers DETR-family detector so its ONNX graph returns final line boxes."""

    def __init__(self, model: torch.nn.Module, post: PostConfig) -> None:
        super().__init__()
        self.model = model
        self.post = post

    def forward(self, pixel_values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(pixel_values=pixel_values)
        scores = out.logits[0].sigmoid().max(dim=-1).values
        scores, idx = scores.topk(min(self.post.top_k, scores.shape[0]))
        cxcywh = out.pred_boxes[0][idx]
        # index_select with nonzero() rather than boolean masks: masks on an empty selection export to a
        # GatherND that onnxruntime rejects when no query passes the threshold (a blank page)
        keep = torch.nonzero(scores >= self.post.score_threshold).squeeze(1)
        scores, cxcywh = scores.index_select(0, keep), cxcywh.index_select(0, keep)
        # a sentinel (zero-size box, score -1) keeps every tensor below non-empty; it suppresses nothing,
        # ranks last, and is dropped at the end
        scores = torch.cat([scores, scores.new_full((1,), -1.0)])
        cxcywh = torch.cat([cxcywh, cxcywh.new_zeros((1, 4))])
        half = cxcywh[:, 2:] / 2
        # read from the input's shape inside the graph: page-shaped inputs differ in height and width
        size = torch._shape_as_tensor(pixel_values)[-2:].flip(0).to(scores.dtype)  # (W, H)
        scale = torch.cat([size, size])
        xyxy = torch.cat([cxcywh[:, :2] - half, cxcywh[:, :2] + half], dim=1) * scale
        keep = torchvision.ops.nms(xyxy, scores, self.post.nms_iou)  # sorted by decreasing score
        xyxy, scores = xyxy.index_select(0, keep), scores.index_select(0, keep)
        lt = torch.maximum(xyxy[:, None, :2], xyxy[None, :, :2])
        rb = torch.minimum(xyxy[:, None, 2:], xyxy[None, :, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=-1)
        own = (xyxy[:, 2:] - xyxy[:, :2]).clamp(min=0).prod(dim=-1).clamp(min=1e-12)
        higher = torch.ones_like(inter).tril(diagonal=-1) > 0
        heights = xyxy[:, 3] - xyxy[:, 1]
        same_line = (heights[None, :] <= SAME_LINE_HEIGHT * heights[:, None]) & (own[None, :] > own[:, None])
        contained = ((inter / own[:, None] >= self.post.contain_threshold) & (higher | same_line)).any(dim=1)
        survivors = torch.nonzero(~contained & (scores >= 0)).squeeze(1)
        return xyxy.index_select(0, survivors), scores.index_select(0, survivors)


def export_detector(model_dir: str | Path, out_dir: str | Path) -> Path:
    """Write out_dir/detector.onnx (+ the folder's settings, naming the graph) for a detector model folder."""
    from ocrkit.detection.predictor import load_detector

    model_dir, out_dir = Path(model_dir), Path(out_dir)
    detector = load_detector(model_dir)
    wrapper = DetectorWithPostprocess(detector.model, detector.post).eval()
    # a page-shaped dummy, so no size is mistaken for a constant; square models get their one size
    sizing = detector.sizing
    half = max(sizing.divisor, sizing.longest // 2 // sizing.divisor * sizing.divisor)
    dummy = torch.zeros(1, 3, sizing.longest, sizing.longest if sizing.square else half)
    page_axes = {} if sizing.square else {"pixel_values": {2: "height", 3: "width"}}
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / ONNX_NAME
    with torch.no_grad(), quiet_export("detector"):
        torch.onnx.export(
            wrapper,
            (dummy,),
            str(target),
            opset_version=OPSET,
            dynamo=False,
            input_names=["pixel_values"],
            output_names=["boxes", "scores"],
            dynamic_axes={"boxes": {0: "lines"}, "scores": {0: "lines"}, **page_axes},
        )
    # the legacy exporter restores the wrapper's previous mode and can leave the HF model in train mode
    wrapper.eval()
    detector.model.eval()
    write_spec(out_dir, replace(read_spec(model_dir, "detector"), onnx=ONNX_NAME))
    carry_card(model_dir, out_dir)
    return target
