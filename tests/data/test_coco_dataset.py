import numpy as np
import pytest
import torch
from fixtures import make_coco

from ocrkit.data.coco_dataset import AugmentConfig, CocoDetectionDataset
from ocrkit.detection.batch import collate_pages
from ocrkit.images import boxes as B
from ocrkit.images.preprocess import PageSizing
from ocrkit.util.errors import InputError


def test_dataset_letterboxes_and_labels_round_trip(tmp_path):
    ann = make_coco(tmp_path, n_images=2, size=(120, 200))
    data = CocoDetectionDataset(ann, PageSizing(96, 32, True), augment=None)
    item = data[1]
    assert item["pixels"].shape == (96, 96, 3) and item["pixels"].dtype == np.uint8
    np.testing.assert_array_equal(item["boxes"], data.boxes_xyxy(item["image_id"]))  # pixels, unencoded
    batch = collate_pages([item])
    pixel_values = batch["pixel_values"][0]
    assert pixel_values.shape == (3, 96, 96)
    assert pixel_values.dtype == torch.float32 and 0 <= pixel_values.min() <= pixel_values.max() <= 1
    np.testing.assert_array_equal(pixel_values.numpy(), item["pixels"].transpose(2, 0, 1) / np.float32(255))
    g = item["geometry"]
    assert (g.width, g.height) == (96, 96) and g.resized_size == (96, 58)
    labels = batch["labels"][0]
    assert labels["class_labels"].tolist() == [0] * len(labels["boxes"])
    pix = B.denormalize(B.cxcywh_to_xyxy(labels["boxes"].numpy()), g.width, g.height)
    np.testing.assert_allclose(g.unmap(pix), data.boxes_xyxy(item["image_id"]), atol=1.0)
    # the label box covers the dark bar in the letterboxed image
    x0, y0, x1, y1 = pix[0].round().astype(int)
    img = pixel_values.mean(0).numpy()
    assert img[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1].mean() < 0.3 and img[g.resized_size[1] + 2 :, :].max() == 0


def test_augmented_boxes_still_cover_the_lines(tmp_path):
    ann = make_coco(tmp_path, n_images=1, size=(160, 240), seed=3)
    data = CocoDetectionDataset(
        ann,
        PageSizing(128),
        augment=AugmentConfig(
            crop_p=1.0, zoom_out_p=1.0, rotate_deg=0.0, color_p=0, blur_p=0, noise_p=0, jpeg_p=0
        ),
    )
    torch.manual_seed(0)
    item = data[0]
    torch.manual_seed(0)
    np.testing.assert_array_equal(data[0]["pixels"], item["pixels"])  # seeded → repeatable
    batch = collate_pages([item])
    labels = batch["labels"][0]
    assert len(labels["boxes"]) == len(data.boxes_xyxy(1))
    g = item["geometry"]
    img = batch["pixel_values"][0].mean(0).numpy()
    for box in B.denormalize(B.cxcywh_to_xyxy(labels["boxes"].numpy()), g.width, g.height):
        x0, y0, x1, y1 = box.round().astype(int)
        assert img[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1].mean() < 0.35


def test_missing_annotation_file_names_it(tmp_path):
    with pytest.raises(InputError, match="nope.json"):
        CocoDetectionDataset(tmp_path / "nope.json", PageSizing(64))


def test_training_pages_get_the_narrow_page_long_side(tmp_path):
    """Training sees a narrow page at the long side inference gives it
    (ocrkit.images.preprocess.page_longest)."""
    ann = make_coco(tmp_path, n_images=1, size=(200, 60))  # short/long 0.3
    plain = CocoDetectionDataset(ann, PageSizing(128, 32, False))
    narrow = CocoDetectionDataset(ann, PageSizing(128, 32, False, min_short=48, max_longest=192))
    assert max(plain[0]["geometry"].resized_size) == 128
    assert max(narrow[0]["geometry"].resized_size) == 160  # 48 / 0.3 = 160
