"""Scanner marks are drawn on the paper beside the lines only, so a page's boxes stay its lines."""

import numpy as np
import torch
from fixtures import make_coco

from ocrkit.data.coco_dataset import AugmentConfig, CocoDetectionDataset
from ocrkit.data.scan_artefacts import _paper_mask, add_scan_artefacts
from ocrkit.images.preprocess import PageSizing

BOXES = np.array([[40, 50, 360, 70], [40, 90, 300, 110], [40, 130, 340, 150]], np.float32)


def _page() -> np.ndarray:
    page = np.full((400, 400, 3), 235, np.uint8)
    for x0, y0, x1, y1 in BOXES.astype(int):
        page[y0 + 4 : y1 - 4, x0:x1:7] = 30  # strokes
    return page


def test_marks_darken_the_paper_and_never_touch_a_line_or_its_margin():
    page = _page()
    keep = _paper_mask(BOXES, 400, 400) == 0
    changed = 0
    for seed in range(40):
        marked = add_scan_artefacts(page, BOXES, np.random.default_rng(seed))
        assert marked.shape == page.shape and marked.dtype == np.uint8
        np.testing.assert_array_equal(marked[keep], page[keep])
        assert (marked <= page).all()  # marks only darken
        changed += int((marked != page).any())
    assert changed >= 38  # every call draws at least one mark (a mark may fall wholly on a line)
    np.testing.assert_array_equal(  # seeded → repeatable
        add_scan_artefacts(page, BOXES, np.random.default_rng(7)),
        add_scan_artefacts(page, BOXES, np.random.default_rng(7)),
    )


def test_the_dataset_draws_them_at_the_configured_rate_and_keeps_the_boxes(tmp_path):
    ann = make_coco(tmp_path, n_images=1, size=(160, 240), seed=3)
    still = dict(crop_p=0, zoom_out_p=0, rotate_deg=0.0, color_p=0, blur_p=0, noise_p=0, jpeg_p=0)
    plain = CocoDetectionDataset(ann, PageSizing(128), augment=AugmentConfig(**still))
    marked = CocoDetectionDataset(ann, PageSizing(128), augment=AugmentConfig(**still, artefacts_p=1.0))
    torch.manual_seed(0)
    a = plain[0]
    torch.manual_seed(0)
    b = marked[0]
    np.testing.assert_array_equal(a["boxes"], b["boxes"])
    assert (b["pixels"] != a["pixels"]).any() and (b["pixels"] <= a["pixels"]).all()
