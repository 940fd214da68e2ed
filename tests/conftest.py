"""Shared fixtures: tiny randomly initialised model folders (built locally, nothing downloaded)."""

from pathlib import Path

import pytest
import torch
from fixtures import TINY

from ocrkit.images.preprocess import PageSizing

TINY_DET = dict(num_queries=30, num_denoising=0, **TINY)


@pytest.fixture(scope="session")
def tiny_detector_dir(tmp_path_factory) -> Path:
    """A D-FINE detector folder (HF files + settings) with a 128 px input and a low score threshold."""
    from ocrkit.detection.factory import create_detector
    from ocrkit.hub.model_folder import DetectorSpec, write_spec
    from ocrkit.images.postprocess import PostConfig

    out = tmp_path_factory.mktemp("tiny_detector")
    torch.manual_seed(0)
    model = create_detector("dfine", "n", **TINY_DET).eval()
    model.save_pretrained(out)
    post = PostConfig(score_threshold=0.0, nms_iou=0.5, contain_threshold=0.8)
    write_spec(out, DetectorSpec(PageSizing(128, 32, True), model.config.model_type, post))
    return out


@pytest.fixture(scope="session")
def tok():
    """The recognizer's default character tokenizer (read-only in every test that asks for it)."""
    from ocrkit.recognition.tokenizer import build_tokenizer

    return build_tokenizer()


@pytest.fixture(scope="session")
def tiny_recognizer_dir(tmp_path_factory) -> Path:
    """A tiny ViT+TrOCR folder whose special/filler tokens are silenced, so it emits real text."""
    from ocrkit.hub.model_folder import RecognizerSpec, write_spec
    from ocrkit.images.line_preprocess import LinePreprocess
    from ocrkit.recognition.model import create_recognizer
    from ocrkit.recognition.tokenizer import build_tokenizer

    out = tmp_path_factory.mktemp("tiny_recognizer")
    tok = build_tokenizer()
    torch.manual_seed(0)
    model = create_recognizer("tiny", tokenizer=tok, image_size=128).eval()
    with torch.no_grad():
        head = model.decoder.output_projection.weight
        for row in [*tok.all_special_ids, *range(len(tok), head.shape[0])]:
            head[row].zero_()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    write_spec(out, RecognizerSpec(LinePreprocess(longest=128, max_height=32)))
    return out


@pytest.fixture
def models(tiny_detector_dir, tiny_recognizer_dir) -> list:
    """The command-line options that point `ocrkit` at both tiny model folders."""
    return ["--det-model", tiny_detector_dir, "--rec-model", tiny_recognizer_dir]
