"""ONNX export of both models and the torch-free runtime: parity with torch, and no torch import."""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fixtures import SCRIPTS

from ocrkit.detection.predictor import load_detector
from ocrkit.export.detector import export_detector
from ocrkit.export.recognizer import export_recognizer
from ocrkit.hub.model_folder import read_spec, write_spec
from ocrkit.recognition import load_recognizer
from ocrkit.runtime import OnnxDetector, OnnxRecognizer


def exported(export, model_dir: Path, out: Path) -> tuple[Path, Path]:
    """(torch model folder, its ONNX export)."""
    export(model_dir, out)
    return model_dir, out


@pytest.fixture(scope="module")
def detector_dirs(tiny_detector_dir, tmp_path_factory):
    return exported(export_detector, tiny_detector_dir, tmp_path_factory.mktemp("det_onnx"))


def test_exported_graph_contains_nms(detector_dirs):
    import onnx

    ops = {node.op_type for node in onnx.load(str(detector_dirs[1] / "detector.onnx")).graph.node}
    assert {"NonMaxSuppression", "TopK", "Trilu"} <= ops


def test_detector_onnx_matches_torch_with_nms_in_graph(detector_dirs):
    torch_dir, onnx_dir = detector_dirs
    rng = np.random.default_rng(0)
    pages = [(rng.random((h, w, 3)) * 255).astype(np.uint8) for h, w in [(300, 200), (100, 400), (128, 128)]]
    ours, theirs = load_detector(torch_dir).predict(pages), OnnxDetector(onnx_dir, threads=1).predict(pages)
    for torch_lines, onnx_lines in zip(ours, theirs, strict=True):
        assert_same_lines(torch_lines, onnx_lines)


def assert_same_lines(ours: tuple, theirs: tuple) -> None:
    """Same scores in the same order and the same boxes (page pixels); lines of equal score may come in
    either order, so every box needs a twin of its score on the other side."""
    (tb, ts), (ob, os_) = ours, theirs
    assert len(tb) == len(ob) and len(tb) > 0
    np.testing.assert_allclose(os_, ts, atol=1e-4)
    far = np.abs(ob[:, None] - tb[None]).max(-1) + 1e9 * (np.abs(os_[:, None] - ts[None]) > 1e-4)
    assert (far.min(1) < 0.05).all() and (far.min(0) < 0.05).all()


@pytest.fixture(scope="module")
def recognizer_dirs(tiny_recognizer_dir, tmp_path_factory):
    return exported(export_recognizer, tiny_recognizer_dir, tmp_path_factory.mktemp("rec_onnx"))


def test_recognizer_onnx_greedy_matches_torch(recognizer_dirs):
    torch_dir, onnx_dir = recognizer_dirs
    rng = np.random.default_rng(1)
    shapes = [(30, 300), (40, 100), (20, 400), (50, 60), (32, 128), (12, 500), (64, 64)]
    crops = [(rng.random(s) * 255).astype(np.uint8) for s in shapes]
    ours = load_recognizer(torch_dir).recognize(crops, batch_size=3)
    theirs = OnnxRecognizer(onnx_dir, threads=1).recognize(crops, batch_size=3)
    assert sum(len(t) for t, _ in ours) > 20  # the test compares real text, not empty strings
    for (tt, ts), (ot, os_) in zip(ours, theirs, strict=True):
        assert tt == ot
        assert abs(ts - os_) < 1e-4


def test_crops_read_cut_to_their_line_match_between_torch_and_onnx(recognizer_dirs):
    # the page pipeline reads crowded lines again cut (`trim_margins=True` per call): both backends cut
    # and read them alike, and the cut is what they read
    torch_dir, onnx_dir = recognizer_dirs
    crops = []
    for width in (200, 320):
        crop = np.full((60, width), 255, np.uint8)
        crop[22:40, 10 : width - 10 : 7] = 0  # the line's strokes
        crop[:6, 20:60] = 0  # a neighbour's descenders at the top edge
        crops.append(crop)
    torch_reader, onnx_reader = load_recognizer(torch_dir), OnnxRecognizer(onnx_dir, threads=1)
    cut = [r.text for r in torch_reader.read_placed(crops, trim_margins=True)]
    assert cut == [r.text for r in onnx_reader.read_placed(crops, trim_margins=True)]
    assert cut == [text for text, _ in torch_reader.recognize(crops, trim_margins=True)]
    whole = [r.text for r in torch_reader.read_placed(crops, trim_margins=False)]
    assert cut != whole and whole == [r.text for r in onnx_reader.read_placed(crops, trim_margins=False)]


def test_cross_attention_mask_hides_the_padding_in_both_decoder_steps(recognizer_dirs):
    import torch

    from ocrkit.decode.greedy import pad_lengths
    from ocrkit.recognition.torch_backend import TorchBackend

    torch_dir, onnx_dir = recognizer_dirs
    width = json.loads((torch_dir / "config.json").read_text())["encoder"]["hidden_size"]
    rng = np.random.default_rng(4)
    short, long = (rng.normal(0, 3, (1, n, width)).astype(np.float32) for n in (9, 21))
    backends = [
        (TorchBackend(load_recognizer(torch_dir).model), torch.from_numpy),
        (OnnxRecognizer(onnx_dir, threads=1), np.asarray),
    ]
    for backend, wrap in backends:
        padded = backend.pad_states([wrap(short), wrap(long)])
        mask = pad_lengths([9, 21])
        runs = {}
        for name, states, run_mask in (
            ("together", padded, mask),
            ("alone", wrap(short), None),
            ("unmasked", padded, None),
        ):
            first, cache = backend.first_step(states, run_mask)
            second, _ = backend.next_step(np.full(len(first), 7, np.int64), cache, run_mask)
            runs[name] = np.stack([first[0], second[0]])
        assert np.abs(runs["together"] - runs["alone"]).max() < 1e-4
        assert np.abs(runs["unmasked"] - runs["alone"]).max() > 1e-3  # the padding would be read


def test_selected_cache_rows_decode_as_the_lines_alone_and_a_prefix_is_not_copied(recognizer_dirs):
    import torch

    from ocrkit.recognition.torch_backend import TorchBackend

    torch_dir, onnx_dir = recognizer_dirs
    width = json.loads((torch_dir / "config.json").read_text())["encoder"]["hidden_size"]
    states = np.random.default_rng(5).normal(0, 3, (3, 12, width)).astype(np.float32)
    tokens = np.array([7, 8, 9], np.int64)
    onnx = OnnxRecognizer(onnx_dir, threads=1)
    for backend, wrap in (
        (TorchBackend(load_recognizer(torch_dir).model), torch.from_numpy),
        (onnx, np.asarray),
    ):
        for rows in ([0, 1], [0, 2]):
            _, cache = backend.first_step(wrap(states), None)
            together, _ = backend.next_step(tokens[rows], backend.select(cache, np.array(rows)), None)
            _, alone_cache = backend.first_step(wrap(states[rows]), None)
            alone, _ = backend.next_step(tokens[rows], alone_cache, None)
            assert np.abs(together - alone).max() < 1e-4
    _, cache = onnx.first_step(states, None)
    prefix, picked = onnx.select(cache, np.array([0, 1])), onnx.select(cache, np.array([0, 2]))
    assert all(np.shares_memory(prefix[k], cache[k]) for k in cache)
    assert not any(np.shares_memory(picked[k], cache[k]) for k in cache)


def test_an_export_without_the_cross_attention_mask_still_reads(recognizer_dirs, tmp_path):
    """Exports made before the mask existed (plain Optimum) read the same, one loop per line width."""
    import shutil
    import warnings

    from optimum.exporters.onnx import main_export

    torch_dir, onnx_dir = recognizer_dirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main_export(
            str(torch_dir),
            str(tmp_path),
            task="image-to-text-with-past",
            opset=17,
            model_kwargs={"interpolate_pos_encoding": True},
        )
    shutil.copy2(onnx_dir / "ocrkit.json", tmp_path / "ocrkit.json")
    old, new = OnnxRecognizer(tmp_path, threads=1), OnnxRecognizer(onnx_dir, threads=1)
    assert not old.masks_encoder and new.masks_encoder
    rng = np.random.default_rng(3)
    crops = [(rng.random((32, w)) * 255).astype(np.uint8) for w in (40, 400, 90, 40)]
    assert [t for t, _ in old.recognize(crops)] == [t for t, _ in new.recognize(crops)]


def test_encoder_output_length_is_symbolic(recognizer_dirs):
    import onnx

    out = onnx.load(str(recognizer_dirs[1] / "encoder_model.onnx")).graph.output[0]
    assert out.type.tensor_type.shape.dim[1].dim_param == "encoder_sequence_length"


@pytest.mark.slow
def test_runtime_works_without_torch(detector_dirs, recognizer_dirs, tmp_path):
    """A deploy environment has no torch: block it, run `ocrkit infer --backend onnx` (the deploy entry
    point, deploy/README.md), compare with the torch pipeline."""
    page = (np.random.default_rng(2).random((200, 300, 3)) * 255).astype(np.uint8)
    from PIL import Image

    Image.fromarray(page).save(tmp_path / "page.png")
    models = ["--det-model", str(detector_dirs[1]), "--rec-model", str(recognizer_dirs[1])]
    out = ["--out", str(tmp_path / "out"), "--format", "json"]
    res = run_cli_without_torch(
        "infer", "--backend", "onnx", "--orientation", "0", *models, *out, str(tmp_path / "page.png")
    )
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads((tmp_path / "out" / "page.png.json").read_text())  # named as by ocrkit infer
    from ocrkit.pipeline import OCR

    want = OCR(detector_dirs[0], recognizer_dirs[0], orientation=0).read(
        page, name=str(tmp_path / "page.png")
    )
    assert len(got["lines"]) == len(want.lines) > 0
    for g, w in zip(got["lines"], want.lines, strict=True):
        assert g["text"] == w.text
        np.testing.assert_allclose(g["bbox"], w.bbox, atol=0.05)


def run_cli_without_torch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`ocrkit ARGS` in a process where torch and transformers cannot be imported (a torch-free install)."""
    runner = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import block_torch\n"
        "from ocrkit.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "assert not {'torch', 'transformers'} & set(sys.modules), 'torch was imported'\n"
        "sys.exit(rc)\n"
    )
    cmd = [sys.executable, "-c", runner, str(SCRIPTS), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_cli_onnx_backend_reads_a_page_without_torch(detector_dirs, recognizer_dirs, tmp_path):
    page = (np.random.default_rng(3).random((200, 300, 3)) * 255).astype(np.uint8)
    from PIL import Image

    Image.fromarray(page).save(tmp_path / "page.png")
    out = tmp_path / "out"
    models = ["--det-model", str(detector_dirs[1]), "--rec-model", str(recognizer_dirs[1]), "--out", str(out)]
    res = run_cli_without_torch(
        "infer", "--backend", "onnx", "--orientation", "0", *models, str(tmp_path / "page.png")
    )
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads((out / "page.png.json").read_text())
    from ocrkit.pipeline import OCR

    want = OCR(detector_dirs[1], recognizer_dirs[1], backend="onnx", orientation=0).read(
        page, name=got["image"]
    )
    assert got["lines"] == json.loads(want.to_json())["lines"] and want.lines  # JSON as written, rounded


@pytest.mark.slow
def test_cli_names_the_extra_a_torch_free_install_lacks(tmp_path):
    page = tmp_path / "page.png"
    from PIL import Image

    Image.new("RGB", (60, 40), "white").save(page)
    cache = {**os.environ, "OCRKIT_CACHE": str(tmp_path / "cache")}  # no export of the shipped models yet
    torch_backend = run_cli_without_torch("infer", str(page), env=cache)  # auto: nothing to export with
    assert torch_backend.returncode == 2
    assert torch_backend.stderr == (
        "ocrkit: error: ocrkit infer needs the 'torch' extra (torch is not installed): "
        "pip install 'ocrkit[torch]'\n"
    )
    shipped_onnx = run_cli_without_torch("infer", "--backend", "onnx", str(page), env=cache)
    assert shipped_onnx.returncode == 2
    assert shipped_onnx.stderr.splitlines() == [
        "ocrkit: error: exporting the shipped detector to ONNX needs the 'export' extra (torch is not "
        "installed): pip install 'ocrkit[export]'"
    ]


@pytest.mark.slow
def test_detector_graph_handles_pages_with_no_line(tiny_detector_dir, tmp_path):
    """No query above the threshold (a blank page) must give empty outputs, not an onnxruntime error."""
    strict = tmp_path / "strict"
    import shutil

    shutil.copytree(tiny_detector_dir, strict)
    spec = read_spec(strict, "detector")
    write_spec(strict, replace(spec, post=replace(spec.post, score_threshold=1.01)))
    export_detector(strict, tmp_path / "onnx")
    page = np.full((120, 90, 3), 255, np.uint8)
    ((boxes, scores),) = OnnxDetector(tmp_path / "onnx").predict([page])
    ((tboxes, _),) = load_detector(strict).predict([page])
    assert boxes.shape == (0, 4) and scores.shape == (0,) and tboxes.shape == (0, 4)


@pytest.mark.slow
def test_onnx_backend_exports_the_default_models_once(
    tiny_detector_dir, tiny_recognizer_dir, tmp_path, monkeypatch
):
    """`--backend onnx` with no model folders exports the shipped torch defaults into the cache once."""
    from ocrkit import OCR
    from ocrkit.hub import zoo

    shipped = tmp_path / "models"
    shipped.mkdir()
    (shipped / "detector").symlink_to(tiny_detector_dir)
    (shipped / "recognizer").symlink_to(tiny_recognizer_dir)
    (shipped / "orientation").symlink_to(zoo.MODELS_DIR / "orientation")
    monkeypatch.setattr(zoo, "MODELS_DIR", shipped)
    monkeypatch.setenv("OCRKIT_CACHE", str(tmp_path))
    page = (np.random.default_rng(2).random((200, 300, 3)) * 255).astype(np.uint8)
    first = OCR(backend="onnx", threads=1).read(page)
    exports = sorted((tmp_path / "onnx").iterdir())
    assert [p.name.split("-")[0] for p in exports] == ["detector", "orientation", "recognizer"]
    assert (exports[0] / "detector.onnx").is_file() and (exports[2] / "encoder_model.onnx").is_file()
    assert (exports[1] / "orientation.onnx").is_file()
    assert (exports[1] / "MODEL_CARD.md").is_file()  # the shipped classifier's card travels with it
    (exports[1] / "MODEL_CARD.md").unlink()  # as in an export made before exports carried their card
    stamps = [p.stat().st_mtime_ns for p in sorted((tmp_path / "onnx").rglob("*.onnx"))]
    second = OCR(backend="onnx", threads=1).read(page)
    assert [p.stat().st_mtime_ns for p in sorted((tmp_path / "onnx").rglob("*.onnx"))] == stamps  # reused
    assert (exports[1] / "MODEL_CARD.md").is_file()  # and given its card
    torch_page = OCR(threads=1).read(page)
    assert len(first.lines) == len(second.lines) == len(torch_page.lines) > 0
    assert [line.text for line in first.lines] == [line.text for line in torch_page.lines]


@pytest.mark.parametrize(
    "min_short,max_longest", [(0, 0), (160, 320)], ids=["long-side", "narrow-pages-longer"]
)
def test_page_shaped_detector_onnx_matches_torch_at_every_page_shape(
    tiny_detector_dir, tmp_path, min_short, max_longest
):
    """One graph with dynamic height and width reads pages of any aspect as torch does (NMS inside),
    with the same long side for each page (narrow pages longer where the settings say so)."""
    import shutil

    import onnx

    paged = tmp_path / "paged"
    shutil.copytree(tiny_detector_dir, paged)
    spec = read_spec(paged, "detector")
    sizing = replace(spec.sizing, longest=256, square=False, min_short=min_short, max_longest=max_longest)
    write_spec(paged, replace(spec, sizing=sizing))
    export_detector(paged, tmp_path / "onnx")
    dims = onnx.load(str(tmp_path / "onnx" / "detector.onnx")).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims[2:]] == ["height", "width"]
    rng = np.random.default_rng(1)
    sizes = [(300, 200), (100, 400), (128, 128), (90, 500)]  # letterboxed to 256x192, 64x256, 256x256, 64x256
    pages = [(rng.random((h, w, 3)) * 255).astype(np.uint8) for h, w in sizes]
    ours, theirs = (
        load_detector(paged).predict(pages),
        OnnxDetector(tmp_path / "onnx", threads=1).predict(pages),
    )
    for torch_lines, onnx_lines in zip(ours, theirs, strict=True):
        assert_same_lines(torch_lines, onnx_lines)


def test_decoder_steps_run_on_one_thread_and_whole_batches_on_the_users(recognizer_dirs):
    _, onnx_dir = recognizer_dirs
    rec = OnnxRecognizer(onnx_dir, threads=3)
    # the encoder and the full decoder (joint decoding's teacher forcing of whole candidate batches)
    for session in (rec.encoder, rec.decoder):
        assert session.get_session_options().intra_op_num_threads == 3
    assert rec.decoder_past.get_session_options().intra_op_num_threads == 1  # one token per line a step


def test_a_calibrated_int8_detector_quantizes_only_its_image_stages_and_finds_the_same_lines(
    detector_dirs, tmp_path
):
    import onnx

    from ocrkit.export.quantize import STATIC_PARTS, quantize_folder

    _, onnx_dir = detector_dirs
    rng = np.random.default_rng(4)
    pages = [(rng.random((h, w, 3)) * 255).astype(np.uint8) for h, w in [(300, 200), (128, 128), (90, 240)]]
    quantize_folder(onnx_dir, tmp_path / "int8", calibration=pages)
    graph = onnx.load(str(tmp_path / "int8" / "detector.onnx")).graph
    fixed = {i.name for i in graph.initializer} | {
        o for n in graph.node if n.op_type == "Constant" for o in n.output
    }
    # activations quantized (not weights or constants): the page and the image-sized stages only, so
    # the decoder, box decoding and NMS read float
    quantized = [n.input[0] for n in graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in fixed]
    assert len(quantized) > 20
    assert all(name == "pixel_values" or name.startswith(STATIC_PARTS) for name in quantized)
    assert {"NonMaxSuppression", "TopK"} <= {n.op_type for n in graph.node}
    assert (tmp_path / "int8" / "ocrkit.json").is_file()
    fp32 = OnnxDetector(onnx_dir, threads=1).predict(pages)
    int8 = OnnxDetector(tmp_path / "int8", threads=1).predict(pages)
    for (fb, fs), (ib, is_) in zip(fp32, int8, strict=True):
        assert ib.shape[1] == 4 and len(ib) == len(is_)
        # the best-scored lines survive int8: each of fp32's five best has a twin within 3 px
        best = fb[np.argsort(-fs)[:5]]
        assert (np.abs(best[:, None] - ib[None]).max(-1).min(1) < 3).all()
