"""Average the weights of model folders fine-tuned from one parent (a uniform "model soup").

    python tools/average_weights.py runs/a/best runs/b/best runs/c/best --out runs/soup
    python tools/average_weights.py parent runs/a/best --weights 0.75,0.25 --out runs/soup

Fine-tunes of one parent stay in one basin of the loss, so their mean is a model of the same shape
that often generalises better than any of them (Wortsman et al., 2022, "Model soups"). Every
`*.safetensors` file of the first folder is averaged over all folders (floating-point tensors in
float64, cast back; other tensors must be equal, except batch-norm counters of batches seen, which
inference never reads: the first folder's are kept); the first folder's other files (config,
tokenizer, ocrkit.json) are copied. The folders must hold the same tensors with the same shapes: anything else
is an error naming the folder. The result is written to a temporary folder and renamed into place.
`--weights` gives each folder its share instead (they must sum to 1): a fine-tune that moved too far from
its parent is taken back part of the way, a point on the line between the two.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from ocrkit.util.argparse_kit import Parser
from ocrkit.util.errors import report_error

COUNTER = "num_batches_tracked"  # batch norm's count of training batches, kept from the first folder


class MismatchError(ValueError):
    """The folders do not hold the same tensors; the message names the folder and the tensor."""


def average_file(paths: list[Path], weights: list[float] | None = None) -> dict[str, torch.Tensor]:
    """The mean of the tensors of one safetensors file over its copies in every folder, weighted by
    `weights` (uniform when None)."""
    weights = weights or [1 / len(paths)] * len(paths)
    first = load_file(str(paths[0]))
    sums = {k: v.double() * weights[0] if v.is_floating_point() else v for k, v in first.items()}
    for path, weight in zip(paths[1:], weights[1:], strict=True):
        other = load_file(str(path))
        if other.keys() != first.keys():
            missing = sorted(set(first) ^ set(other))[:3]
            raise MismatchError(f"{path}: other tensors than {paths[0]} ({', '.join(missing)})")
        for key, value in other.items():
            if value.shape != first[key].shape:
                raise MismatchError(
                    f"{path}: {key} has shape {tuple(value.shape)}, not {tuple(first[key].shape)}"
                )
            if value.is_floating_point():
                sums[key] += value.double() * weight
            elif not torch.equal(value, first[key]) and not key.endswith(COUNTER):
                raise MismatchError(f"{path}: {key} (not floating point) differs from {paths[0]}")
    return {
        k: v.to(first[k].dtype).contiguous() if first[k].is_floating_point() else v for k, v in sums.items()
    }


def average_folders(folders: list[Path], out: Path, weights: list[float] | None = None) -> None:
    """Write the average of `folders` (weighted by `weights`, uniform when None) to `out`, replaced
    atomically if it exists."""
    if len(folders) < 2:
        raise ValueError("give at least two folders to average")
    if weights is not None:
        if len(weights) != len(folders):
            raise ValueError(f"--weights: {len(weights)} weights for {len(folders)} folders")
        if not (all(w >= 0 for w in weights) and abs(sum(weights) - 1) <= 1e-6):  # NaN fails too
            raise ValueError(f"--weights: each at least 0 and summing to 1, not {weights}")
    for folder in folders:
        if not folder.is_dir():
            raise MismatchError(f"{folder}: not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for item in sorted(folders[0].iterdir()):
            if item.suffix == ".safetensors":
                copies = [folder / item.name for folder in folders]
                for copy in copies:
                    if not copy.is_file():
                        raise MismatchError(f"{copy.parent}: no {item.name}")
                save_file(average_file(copies, weights), str(staging / item.name), {"format": "pt"})
            elif item.is_file():
                shutil.copy2(item, staging / item.name)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def shares(text: str) -> list[float]:
    """`--weights`: comma-separated numbers (argparse turns the ValueError into a one-line usage error)."""
    return [float(value) for value in text.split(",")]


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="model folders of one architecture")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the average to")
    parser.add_argument(
        "--weights", type=shares, help="each folder's share, comma-separated, sum 1 (default: equal)"
    )
    args = parser.parse_args()
    weights = args.weights
    try:
        average_folders(args.folders, args.out, weights)
    except ValueError as exc:
        report_error(exc)
        return 2
    told = "equal shares" if weights is None else "shares " + ",".join(f"{w:g}" for w in weights)
    print(f"{args.out}: the average of {len(args.folders)} folders, {told}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
