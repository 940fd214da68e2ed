"""Detection metrics: COCO mAP / mAP50 (pycocotools) and line P/R/F1 at IoU 0.5.

P/R/F1 is what users feel (a missed or duplicated line); it is computed after post-processing
with one-to-one matching that maximises the number of matched pairs (Hungarian assignment), so
a duplicate box can never count twice.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
from scipy.optimize import linear_sum_assignment

from ocrkit.images import boxes as B


def match_pairs(
    pred_xyxy: np.ndarray, gt_xyxy: np.ndarray, iou_threshold: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """(prediction indices, ground-truth indices) of the largest one-to-one matching with IoU ≥ threshold."""
    if len(pred_xyxy) == 0 or len(gt_xyxy) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    overlaps = B.iou(pred_xyxy, gt_xyxy)
    ok = overlaps >= iou_threshold
    # maximise matches first, then total IoU as a tie-break (the IoU term is < 1 per pair)
    cost = -(ok * (1.0 + overlaps / (len(overlaps) + 1)))
    rows, cols = linear_sum_assignment(cost)
    keep = ok[rows, cols]
    return rows[keep], cols[keep]


def match_count(pred_xyxy: np.ndarray, gt_xyxy: np.ndarray, iou_threshold: float = 0.5) -> int:
    """Largest number of one-to-one (prediction, ground truth) pairs with IoU ≥ threshold."""
    return len(match_pairs(pred_xyxy, gt_xyxy, iou_threshold)[0])


@dataclass
class LineCounts:
    """Micro-averaged counts over a data set."""

    matched: int = 0
    predicted: int = 0
    truth: int = 0

    def add(self, pred_xyxy: np.ndarray, gt_xyxy: np.ndarray, iou_threshold: float = 0.5) -> None:
        self.matched += match_count(pred_xyxy, gt_xyxy, iou_threshold)
        self.predicted += len(pred_xyxy)
        self.truth += len(gt_xyxy)

    def scores(self) -> dict[str, float]:
        precision = self.matched / self.predicted if self.predicted else float(self.truth == 0)
        recall = self.matched / self.truth if self.truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": precision, "recall": recall, "f1": f1}


def coco_map(
    coco_gt: COCO, detections: dict[int, tuple[np.ndarray, np.ndarray]], max_dets: int = 300
) -> dict[str, float]:
    """{"map", "map50"} of xyxy detections (original pixels) per image id, against `coco_gt`.

    Only the images in `detections` are scored; every detection counts as category 1 (text_line).
    max_dets is raised from COCO's 100 because a dense page has more lines than that.
    """
    category = coco_gt.getCatIds()[0] if coco_gt.getCatIds() else 1
    records = []
    for image_id, (xyxy, scores) in detections.items():
        for box, score in zip(B.xyxy_to_xywh(xyxy), scores, strict=True):
            records.append(
                {
                    "image_id": int(image_id),
                    "category_id": category,
                    "bbox": [float(v) for v in box],
                    "score": float(score),
                }
            )
    if not records:
        return {"map": 0.0, "map50": 0.0}
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
        coco_dt = coco_gt.loadRes(records)
        evaluator = COCOeval(coco_gt, coco_dt, "bbox")
        evaluator.params.imgIds = sorted(int(i) for i in detections)
        evaluator.params.maxDets = [1, 10, max_dets]
        evaluator.evaluate()
        evaluator.accumulate()
    # precision[iou, recall, class, area, max_dets]; summarize() would read AP at a hard-coded 100 dets
    precision = evaluator.eval["precision"][:, :, :, 0, -1]
    return {"map": _mean_valid(precision), "map50": _mean_valid(precision[0])}


def _mean_valid(values: np.ndarray) -> float:
    """Mean over entries pycocotools filled in (it marks undefined ones with -1)."""
    valid = values[values > -1]
    return float(valid.mean()) if valid.size else 0.0
