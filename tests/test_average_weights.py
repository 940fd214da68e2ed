"""tools/average_weights.py: the mean of model folders, tensor by tensor, and mismatches refused."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("average_weights", REPO / "tools" / "average_weights.py")
average = importlib.util.module_from_spec(spec)
spec.loader.exec_module(average)


def _folder(path: Path, scale: float, steps: int = 3, extra: dict | None = None) -> Path:
    path.mkdir()
    tensors = {
        "layer.weight": torch.full((2, 3), scale, dtype=torch.float32),
        "layer.bias": torch.arange(3, dtype=torch.float16) * scale,
        "position_ids": torch.arange(4),
        "norm.num_batches_tracked": torch.tensor(int(100 * scale)),
        **(extra or {}),
    }
    save_file(tensors, str(path / "model.safetensors"))
    save_file({"head": torch.tensor([scale, -scale])}, str(path / "ctc_head.safetensors"))
    (path / "config.json").write_text(f'{{"steps": {steps}}}')
    return path


def test_the_average_is_the_mean_of_each_tensor_in_its_own_dtype(tmp_path):
    folders = [_folder(tmp_path / f"m{i}", s, steps=i) for i, s in enumerate((1.0, 2.0, 6.0))]
    out = tmp_path / "soup"
    average.average_folders(folders, out)
    model, head = load_file(str(out / "model.safetensors")), load_file(str(out / "ctc_head.safetensors"))
    assert torch.equal(model["layer.weight"], torch.full((2, 3), 3.0))
    assert model["layer.bias"].dtype == torch.float16
    assert torch.allclose(model["layer.bias"].float(), torch.arange(3.0) * 3.0)
    assert torch.equal(model["position_ids"], torch.arange(4))
    assert int(model["norm.num_batches_tracked"]) == 100  # a counter, kept from the first folder
    assert torch.equal(head["head"], torch.tensor([3.0, -3.0]))
    assert (out / "config.json").read_text() == '{"steps": 0}'  # the first folder's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m0", "m1", "m2", "soup"]  # no staging left


def test_folders_of_other_shapes_or_tensors_are_refused_naming_the_folder(tmp_path):
    first = _folder(tmp_path / "a", 1.0)
    wider = _folder(tmp_path / "b", 1.0, extra={"layer.weight": torch.zeros(2, 4)})
    more = _folder(tmp_path / "c", 1.0, extra={"new.weight": torch.zeros(1)})
    with pytest.raises(
        average.MismatchError, match=r"b/model.safetensors: layer.weight has shape \(2, 4\), not \(2, 3\)"
    ):
        average.average_folders([first, wider], tmp_path / "out")
    with pytest.raises(average.MismatchError, match="c/model.safetensors: other tensors than .*new.weight"):
        average.average_folders([first, more], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_command_says_what_is_wrong_in_one_line(tmp_path):
    first = _folder(tmp_path / "a", 1.0)
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "average_weights.py"),
            str(first),
            str(tmp_path / "nope"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stderr.strip() == f"ocrkit: error: {tmp_path / 'nope'}: not a folder"


def test_integer_tensors_that_differ_are_refused(tmp_path):
    first = _folder(tmp_path / "a", 1.0)
    other = _folder(tmp_path / "b", 1.0, extra={"position_ids": torch.arange(1, 5)})
    with pytest.raises(average.MismatchError, match="b/model.safetensors: position_ids .not floating point"):
        average.average_folders([first, other], tmp_path / "out")


def test_weights_give_each_folder_its_share(tmp_path):
    folders = [_folder(tmp_path / f"m{i}", s) for i, s in enumerate((2.0, 6.0))]
    average.average_folders(folders, tmp_path / "soup", weights=[0.75, 0.25])
    model = load_file(str(tmp_path / "soup" / "model.safetensors"))
    assert torch.equal(model["layer.weight"], torch.full((2, 3), 3.0))  # 0.75 * 2 + 0.25 * 6
    assert torch.allclose(model["layer.bias"].float(), torch.arange(3.0) * 3.0)
    bad_shares = (
        ([0.5], "1 weights for 2 folders"),
        ([0.7, 0.7], "summing to 1"),
        ([float("nan"), 1], "summing"),
    )
    for bad, message in bad_shares:
        with pytest.raises(ValueError, match=message):
            average.average_folders(folders, tmp_path / "bad", weights=bad)
    assert not (tmp_path / "bad").exists()


def test_weights_that_are_not_numbers_are_a_usage_error_naming_the_option(tmp_path):
    first, second = _folder(tmp_path / "a", 1.0), _folder(tmp_path / "b", 2.0)
    tool = str(REPO / "tools" / "average_weights.py")
    args = [
        sys.executable,
        tool,
        str(first),
        str(second),
        "--out",
        str(tmp_path / "out"),
        "--weights",
        "0.7,x",
    ]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 2 and "--weights" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()
