"""tools/judge_recognizer.py: the release rule's arithmetic — weighted parts, paired errors, vetoes."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("judge_recognizer", REPO / "tools" / "judge_recognizer.py")
judge = importlib.util.module_from_spec(spec)
spec.loader.exec_module(judge)


def _sets(**parts: tuple[str, int, int]) -> dict[str, dict]:
    return {
        name: {"part": part, "weight": weight, "lines": [{}] * n} for name, (part, weight, n) in parts.items()
    }


def test_paired_difference_and_its_standard_error() -> None:
    base, cand, chars = np.array([1.0, 0, 2, 0]), np.array([0.0, 0, 4, 1]), np.array([10.0, 10, 10, 10])
    diff, se = judge.paired(base, cand, chars)
    d = cand - base  # -1, 0, 2, 1
    assert diff == pytest.approx(2 / 40)
    assert se == pytest.approx(np.sqrt(4 * np.var(d, ddof=1)) / 40)


def test_parts_are_weighted_by_source_size_and_a_clear_rise_vetoes() -> None:
    sets = _sets(a=("unseen", 300, 30), b=("unseen", 100, 30), c=("in-source", 50, 30), d=("dev", 0, 30))
    n = 120
    chars = np.full(n, 20.0)
    base = np.concatenate([np.full(30, 4.0), np.full(30, 2.0), np.full(30, 1.0), np.full(30, 1.0)])
    cand = base.copy()
    cand[:30] = 2.0  # a: 0.2 -> 0.1
    rows = judge.subset_rows(sets, base, cand, chars)
    summary, ships = judge.decide(rows)
    assert summary["base"]["unseen"] == pytest.approx((0.2 * 300 + 0.1 * 100) / 400)
    assert summary["candidate"]["unseen"] == pytest.approx((0.1 * 300 + 0.1 * 100) / 400)
    assert summary["candidate"]["score"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.05)
    assert ships
    cand[60:90] += np.tile([0.0, 2.0], 15)  # in-source c rises by 0.05, far beyond its noise
    rows = judge.subset_rows(sets, base, cand, chars)
    assert rows["c"]["worse"] and not rows["a"]["worse"]
    assert not judge.decide(rows)[1]


def test_development_and_small_subsets_never_veto() -> None:
    sets = _sets(u=("unseen", 10, 30), i=("in-source", 10, 10), d=("dev", 0, 30))
    chars = np.full(70, 10.0)
    base = np.concatenate([np.full(30, 2.0), np.zeros(40)])
    cand = np.concatenate([np.full(30, 1.0), np.full(40, 1.0)])  # i (10 lines) and dev both rise by 0.1
    rows = judge.subset_rows(sets, base, cand, chars)
    assert not rows["i"]["worse"] and not rows["d"]["worse"]
    assert judge.decide(rows)[0]["candidate"]["score"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.1)


def test_samples_are_seeded_and_bounded() -> None:
    records = [{"image": f"{n:03d}.png"} for n in range(50)]
    first, again = judge.sample(records, 20, seed=5), judge.sample(list(reversed(records)), 20, seed=5)
    assert first == again and len(first) == 20
    assert judge.sample(records, 80, seed=5) == records


def test_candidate_settings_change_the_copy_only(tiny_recognizer_dir, tmp_path) -> None:
    """`--set` judges a change of settings: the candidate's copy reads with them, the base is untouched,
    and a setting nothing reads is refused before anything is read."""
    from ocrkit.hub.model_folder import read_spec
    from ocrkit.util.errors import ModelError

    before = (tiny_recognizer_dir / "ocrkit.json").read_text()
    assert read_spec(tiny_recognizer_dir, "recognizer").decoding != "joint"
    copy = judge.as_shipped(tiny_recognizer_dir, tiny_recognizer_dir, tmp_path / "cand", ["decoding=joint"])
    assert read_spec(copy, "recognizer").decoding == "joint"
    assert (tiny_recognizer_dir / "ocrkit.json").read_text() == before
    with pytest.raises(ModelError, match="decodng"):
        judge.as_shipped(tiny_recognizer_dir, tiny_recognizer_dir, tmp_path / "typo", ["decodng=joint"])
