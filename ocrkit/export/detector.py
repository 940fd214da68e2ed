"""Detector → ONNX with the whole post-processing inside the graph.

Graph: pixel_values [1, 3, H, W] in [0, 1] → sigmoid → top-k → score threshold → NonMaxSuppression →
drop nested duplicates (`boxes.suppress_contained`) → boxes [N, 4] xyxy in input pixels, scores [N]. H and W
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
from ocrkit.images.boxes import BAND_GROW, BAND_WIDTH, SAME_LINE_HEIGHT
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
        survivors = self.suppress_contained(xyxy, scores, self.post.contain_threshold)
        return xyxy.index_select(0, survivors), scores.index_select(0, survivors)

    @staticmethod
    def suppress_contained(xyxy: torch.Tensor, scores: torch.Tensor, threshold: float) -> torch.Tensor:
        """`boxes.suppress_contained` in graph operations, on boxes sorted by decreasing score (the
        sentinel last): the indices kept, the sentinel left out."""
        inside = DetectorWithPostprocess.inside(xyxy)
        contained = inside >= threshold
        ones = torch.ones_like(inside)
        higher = ones.tril(diagonal=-1) > 0  # [i, j]: j ranks above i
        itself = (ones.tril() * ones.triu()) > 0
        heights = xyxy[:, 3] - xyxy[:, 1]
        widths = (xyxy[:, 2] - xyxy[:, 0]).clamp(min=1e-12)
        across = torch.minimum(xyxy[:, None, 2], xyxy[None, :, 2]) - torch.maximum(
            xyxy[:, None, 0], xyxy[None, :, 0]
        )
        band = across / widths[None, :] >= BAND_WIDTH
        page_line = torch.maximum(heights, DetectorWithPostprocess.median_height(heights, scores))
        line_height = torch.where(band, heights[:, None], page_line[:, None])
        taller = heights[None, :] > SAME_LINE_HEIGHT * line_height
        own = (xyxy[:, 2:] - xyxy[:, :2]).clamp(min=0).prod(dim=-1)
        same_line = ~taller & (own[None, :] > own[:, None])
        duplicate = contained & (higher | same_line)
        holds_better_line = (contained & higher.T & taller).any(dim=0)
        grow = BAND_GROW * heights
        down = torch.minimum(xyxy[:, None, 3] + grow[:, None], xyxy[None, :, 3])
        up = torch.maximum(xyxy[:, None, 1] - grow[:, None], xyxy[None, :, 1])
        reads = band & ~duplicate & ~itself
        read_elsewhere = ((down - up).clamp(min=0) * reads).sum(dim=0) >= heights
        dropped = duplicate.any(dim=1) | (holds_better_line & read_elsewhere)
        return torch.nonzero(~dropped & (scores >= 0)).squeeze(1)

    @staticmethod
    def inside(xyxy: torch.Tensor) -> torch.Tensor:
        """[i, j]: the share of box i's area inside box j."""
        lt = torch.maximum(xyxy[:, None, :2], xyxy[None, :, :2])
        rb = torch.minimum(xyxy[:, None, 2:], xyxy[None, :, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=-1)
        own = (xyxy[:, 2:] - xyxy[:, :2]).clamp(min=0).prod(dim=-1).clamp(min=1e-12)
        return inter / own[:, None]

    @staticmethod
    def median_height(heights: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """`boxes.median_height` of the real boxes (score ≥ 0, not the sentinel); 0 when there are none."""
        real = heights.index_select(0, torch.nonzero(scores >= 0).squeeze(1)).sort().values
        padded = torch.cat([real, real.new_zeros((1,))])
        middle = ((torch._shape_as_tensor(real)[0] - 1).clamp(min=0) // 2).reshape(1)
        return padded.index_select(0, middle)


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
