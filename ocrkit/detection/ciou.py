"""Complete-IoU (CIoU) for DETR training: eps-safe box similarity, matcher cost and box loss.

CIoU adds a centre-distance and an aspect-ratio term to IoU, so it still pulls a predicted box
towards its target when they do not overlap (GIoU's enclosing-box term is weak for the long, thin
text-line boxes we detect). torchvision's `complete_box_iou_loss` divides by box width/height
without an eps; D-FINE clamps boxes to [0, 1], so zero-size predictions occur and would turn the
loss and gradients into NaN. Every division here is guarded.
"""

from __future__ import annotations

import math

import torch

EPS = 1e-7


def ciou(boxes1: torch.Tensor, boxes2: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """CIoU of broadcastable xyxy boxes (`[..., 4]`) → `[...]` in (-1.5, 1].

    Pairwise: `ciou(a[:, None], b[None])`; element-wise: `ciou(a, b)`. The aspect-ratio weight
    alpha is a constant for the gradient, as in the CIoU paper and torchvision.
    """
    x0a, y0a, x1a, y1a = boxes1.unbind(-1)
    x0b, y0b, x1b, y1b = boxes2.unbind(-1)
    wa, ha = (x1a - x0a).clamp(min=0), (y1a - y0a).clamp(min=0)
    wb, hb = (x1b - x0b).clamp(min=0), (y1b - y0b).clamp(min=0)

    inter_w = (torch.minimum(x1a, x1b) - torch.maximum(x0a, x0b)).clamp(min=0)
    inter_h = (torch.minimum(y1a, y1b) - torch.maximum(y0a, y0b)).clamp(min=0)
    inter = inter_w * inter_h
    union = wa * ha + wb * hb - inter
    iou = inter / (union + eps)

    # squared diagonal of the smallest enclosing box, and squared distance between centres
    diag2 = (torch.maximum(x1a, x1b) - torch.minimum(x0a, x0b)) ** 2 + (
        torch.maximum(y1a, y1b) - torch.minimum(y0a, y0b)
    ) ** 2
    centre2 = ((x0a + x1a - x0b - x1b) ** 2 + (y0a + y1a - y0b - y1b) ** 2) / 4
    distance = centre2 / (diag2 + eps)

    # w / (h + eps): atan stays finite for h = 0 and its gradient -w / (w² + (h+eps)²) too
    v = (4 / math.pi**2) * (torch.atan(wb / (hb + eps)) - torch.atan(wa / (ha + eps))) ** 2
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return iou - distance - alpha * v


def ciou_loss(pred_xyxy: torch.Tensor, target_xyxy: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """Element-wise 1 − CIoU (no reduction), the drop-in for DETR's 1 − GIoU box term."""
    return 1 - ciou(pred_xyxy, target_xyxy, eps)
