import json

import numpy as np
import pytest
import torch
from fixtures import REPO, TINY, make_coco

from ocrkit.detection import create_detector, load_detector
from ocrkit.detection.compat import accepted_kwargs
from ocrkit.detection.config import DetectorConfig
from ocrkit.detection.factory import RANDOM_INIT
from ocrkit.detection.loss import CIoUDetrLoss
from ocrkit.detection.task import DetectionTask
from ocrkit.hub.model_folder import FORMAT_VERSION, DetectorSpec, read_spec, spec_path, write_spec
from ocrkit.images.preprocess import PageSizing
from ocrkit.util.config import from_dict, load_config
from ocrkit.util.errors import ModelError


@pytest.mark.parametrize("arch,size", [("dfine", "n8"), ("dfine", "s"), ("rtdetr", "r18")])
def test_factory_builds_every_arch_without_downloads(arch, size):
    model = create_detector(arch, size, num_queries=7)
    cfg = model.config
    assert cfg.id2label == {0: "text_line"} and cfg.num_queries == 7
    assert cfg.freeze_backbone_batch_norms is False and cfg.anchor_image_size is None
    declared = accepted_kwargs(type(cfg), RANDOM_INIT)
    assert all(getattr(cfg, k) == v for k, v in declared.items())
    # keys the installed transformers does not declare stay out of config.json
    assert not (set(RANDOM_INIT) - set(declared)) & set(cfg.to_dict())
    assert isinstance(model.loss_function, CIoUDetrLoss) and model.training


def test_each_decoder_layer_keeps_its_own_heads_shared_with_the_decoder():
    # transformers 5 also declares ties of layers 1.. to layer 0; ocrkit.detection.compat drops them
    model = create_detector("dfine", "n", num_queries=7, **{**TINY, "decoder_layers": 2})
    first, second = (head.layers[0].weight for head in model.bbox_embed)
    assert first is not second and not torch.equal(first, second)
    assert model.model.decoder.bbox_embed[1].layers[0].weight is second
    assert model.model.decoder.class_embed[1].weight is model.class_embed[1].weight
    assert len(create_detector("dfine", "n", num_queries=7, **TINY).bbox_embed) == 1  # one layer builds


def test_page_shaped_inputs_get_the_position_embedding_of_transformers_457():
    from transformers.models.d_fine import modeling_d_fine

    from ocrkit.detection.compat import position_embedding_457

    create_detector("dfine", "n", num_queries=7, **TINY)  # makes transformers 5 compute as 4.57
    emb = position_embedding_457(height=3, width=5, embed_dim=8)
    row = torch.arange(15.0)  # laid out width-major: row i holds w = i // 3, h = i % 3
    w, h = row // 3, row % 3  # columns: sin w, cos w, sin h, cos h, two frequencies each (the first is 1)
    torch.testing.assert_close(emb[:, [0, 2, 4, 6]], torch.stack([w.sin(), w.cos(), h.sin(), h.cos()], 1))
    if hasattr(modeling_d_fine, "build_2d_sinusoidal_position_embedding"):  # transformers 5
        assert modeling_d_fine.build_2d_sinusoidal_position_embedding is position_embedding_457
    else:
        legacy = modeling_d_fine.DFineHybridEncoder.build_2d_sincos_position_embedding(5, 3, 8)
        torch.testing.assert_close(legacy[0], emb)


def test_from_pretrained_reheads_to_one_class(tmp_path):
    source = create_detector("dfine", "n", num_queries=12, **TINY)
    source.config.num_labels = 3  # pretend a 3-class (e.g. COCO) checkpoint
    source.config.id2label = {0: "a", 1: "b", 2: "c"}
    three = type(source)(source.config)
    three.save_pretrained(tmp_path / "src")
    model = create_detector(pretrained=tmp_path / "src", num_queries=12)
    assert model.config.num_labels == 1 and model.config.id2label == {0: "text_line"}
    assert model.model.enc_score_head.out_features == 1
    # the backbone weights came from the checkpoint
    torch.testing.assert_close(
        model.model.backbone.model.embedder.stem1.convolution.weight,
        three.model.backbone.model.embedder.stem1.convolution.weight,
    )
    out = model(
        pixel_values=torch.rand(1, 3, 64, 64),
        labels=[
            {"class_labels": torch.zeros(1, dtype=torch.long), "boxes": torch.tensor([[0.5, 0.5, 0.4, 0.1]])}
        ],
    )
    assert torch.isfinite(out.loss) and "loss_ciou" in out.loss_dict


def test_param_groups_split_backbone_and_norms():
    config = DetectorConfig()
    config.train.backbone_lr_mult = 0.1
    model = create_detector("dfine", "n", **TINY)
    groups = DetectionTask(config).param_groups(model, 1e-3, 0.05)
    assert sum(len(g["params"]) for g in groups) == sum(1 for p in model.parameters() if p.requires_grad)
    assert {(g["lr"], g["weight_decay"]) for g in groups} == {
        (1e-4, 0.0),
        (1e-4, 0.05),
        (1e-3, 0.0),
        (1e-3, 0.05),
    }
    assert all(p.ndim > 1 for g in groups if g["weight_decay"] for p in g["params"])


def test_train_script_save_and_load_detector(tmp_path):
    from ocrkit.cli import main

    train, val = make_coco(tmp_path / "train", 4), make_coco(tmp_path / "val", 2, seed=1)
    out = tmp_path / "run"
    rc = main(
        [
            "train",
            "detector",
            "-c",
            str(REPO / "configs/detector/tiny.yaml"),
            "--set",
            f"data.train={train}",
            "--set",
            f"data.val={val}",
            "--set",
            f"train.out_dir={out}",
        ]
    )
    assert rc == 0
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    evals = [m["eval"] for m in metrics if "eval" in m]
    assert set(evals[-1]) == {"map", "map50", "precision", "recall", "f1"}
    spec = read_spec(out / "model", "detector")
    assert spec.sizing.longest == 64 and spec.sizing.square is True and spec.format_version == FORMAT_VERSION
    detector = load_detector(out / "model")
    results = detector.predict([np.full((90, 150, 3), 255, np.uint8), np.zeros((200, 60, 3), np.uint8)])
    assert len(results) == 2
    for (boxes, scores), (h, w) in zip(results, [(90, 150), (200, 60)], strict=True):
        assert boxes.shape == (len(scores), 4) and (boxes[:, 2] <= w).all() and (boxes[:, 3] <= h).all()


def test_load_detector_errors_name_the_folder(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        load_detector(tmp_path / "missing")
    spec_path(tmp_path).write_text("{broken")
    with pytest.raises(ModelError, match="not valid JSON"):
        load_detector(tmp_path)
    write_spec(tmp_path, DetectorSpec(PageSizing(64)))
    with pytest.raises(ModelError, match="model.safetensors"):
        load_detector(tmp_path)


@pytest.mark.parametrize("path", sorted((REPO / "configs/detector").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_detector_config_loads(path):
    cfg = load_config(DetectorConfig, path)
    assert cfg.data.longest % 32 == 0 and cfg.model.num_queries <= 300


def test_page_shaped_training_batches_pages_of_one_aspect(tmp_path):
    """Tall and wide pages mixed: page-shaped batches never mix them (each page trains in a frame of its
    own aspect, as inference reads it); the square input keeps the engine's plain shuffled batches."""
    tall = make_coco(tmp_path / "tall", 6, size=(200, 80))
    wide = make_coco(tmp_path / "wide", 6, size=(80, 200), seed=1)
    data = {
        "train": [{"path": str(tall), "weight": 0.5}, {"path": str(wide), "weight": 0.5}],
        "epoch_pages": 12,
        "longest": 64,
        "square": False,
        "augment": {"enabled": False},
    }
    task = DetectionTask(from_dict(DetectorConfig, {"data": data}))
    dataset = task.train_dataset()
    batches = list(task.batch_sampler(dataset, 3, seed=0))
    sizes = dataset.page_sizes()
    assert sorted(i for b in batches for i in b) == list(range(len(dataset)))
    assert all(len({sizes[i] for i in b}) == 1 for b in batches)
    batch = task.collate([dataset[i] for i in batches[0]])
    h, w = sizes[batches[0][0]]
    assert (batch["pixel_values"].shape[2] > batch["pixel_values"].shape[3]) == (h > w)

    square = DetectionTask(from_dict(DetectorConfig, {"data": {**data, "square": True}}))
    assert square.batch_sampler(dataset, 3, seed=0) is None
