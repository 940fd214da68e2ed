"""Judge a detector folder against the shipped one by the release rule of the detector training log.

Both read the same pages end to end with the shipped recognizer and orientation (`OCR`, torch): every
page of the unseen sources (`data/unseen/pages`, which no training config reads) and the in-source
validation pages (`data/real/pages/coco_val.json`), scored per subset by line recall and page CER.

Score = 0.5 × unseen page CER + 0.5 × in-source page CER, each over the annotated characters of its
pages. Text detected outside the annotated part of a page (the box around its annotated lines grown by
one median line height) is not scored: photographs of letters hold the facing page, which nobody
annotated, and a detector that reads it must not lose page CER for it. Nor is text read on a line
annotated without a transcription (`ocrkit.evaluation.transcribed_parts`), as `ocrkit evaluate pages`
scores it. The candidate ships when its
score is lower and no subset of 200+ annotated lines loses more than 0.02 line recall or gains more than
max(0.01, 2 × the paired standard error over its pages) page CER.

    ocrkit models ship runs/det/best runs/det/cand --set score_threshold=0.25
    python tools/judge_detector.py runs/det/cand --out eval/judge_det.json
    python tools/judge_detector.py ocrkit/models/detector --candidate-rec REC_FOLDER --out eval/judge_rec.json

Reading 400 pages end to end takes ~25 minutes on two cores, and the shipped detector's reading is the
same for every candidate: each model's readings (every page's boxes and texts) are kept in `--cache`
under a key of everything they depend on (the detector folder, the shipped recognizer and orientation,
ocrkit's code, the page images), so a later judgement against the same base reads only the candidate,
and the readings are scored anew by whatever scoring the judging code holds. A change of ocrkit's own
post-processing is judged the same way: the tool run from a checkout of the code before it stores the
shipped detector's reading, and `--base-reading` hands that file to the run of the new code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from ocrkit.detection.metrics import match_count
from ocrkit.evaluation import is_case_sensitive, load_coco, page_texts
from ocrkit.images import boxes as B
from ocrkit.images.io import load_image
from ocrkit.pages.outputs import write_atomic
from ocrkit.recognition.metrics import edit_distance

PACKAGE = Path(__file__).resolve().parents[1] / "ocrkit"
MAX_OUTSIDE = 0.5  # a detected line with more of its box outside the annotated part is not scored
MIN_LINES = 200  # subsets smaller than this are reported, not judged
MAX_RECALL_LOSS = 0.02
MIN_CER_RISE = 0.01

# per page: annotated lines matched at IoU 0.5, annotated lines, character edits, annotated characters
PageCounts = tuple[int, int, int, int]
# one page read: {"boxes": xyxy lists, "texts": strings, "det_scores", "rec_scores": floats}
Reading = dict[str, list]


def pages_of(coco_paths: list[Path], part: str) -> list[dict]:
    """Every page of the COCO files: part, subset, image path, boxes, texts, case rule."""
    pages = []
    for path in coco_paths:
        coco = load_coco(path)
        for image in coco.dataset["images"]:
            anns = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
            pages.append(
                {
                    "part": part,
                    "subset": image.get("subset") or path.stem,
                    "path": path.parent / image["file_name"],
                    "boxes": B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4)),
                    "texts": [a.get("text") or "" for a in anns],
                    "case_sensitive": is_case_sensitive(coco, image),
                }
            )
    return pages


def scored(detected: np.ndarray, annotated: np.ndarray) -> np.ndarray:
    """Which detected xyxy boxes are scored: those with at most MAX_OUTSIDE of their area outside the
    annotated part of the page (every box when nothing is annotated)."""
    if not len(annotated):
        return np.ones(len(detected), bool)
    grow = float(np.median(annotated[:, 3] - annotated[:, 1]))
    part = np.concatenate([annotated[:, :2].min(0) - grow, annotated[:, 2:].max(0) + grow])
    inside = B.intersection(detected, part)[:, 0] / np.maximum(B.area(detected), 1e-6)
    return inside >= 1 - MAX_OUTSIDE


def page_reading(ocr, page: dict) -> Reading:
    """One page read end to end: its line boxes (xyxy, page pixels), their texts and the detector's and
    recognizer's scores (kept for studies of the readings; the judgement reads boxes and texts)."""
    read = ocr.read(load_image(page["path"]), name=str(page["path"]))
    return {
        "boxes": read.boxes().tolist(),
        "texts": [line.text for line in read.lines],
        "det_scores": [line.det_score for line in read.lines],
        "rec_scores": [line.rec_score for line in read.lines],
    }


def page_counts(reading: Reading, page: dict) -> PageCounts:
    """A page's reading scored as `ocrkit evaluate pages` scores it, the lines outside its annotated part
    left out of the text."""
    boxes = np.array(reading["boxes"], np.float32).reshape(-1, 4)
    ref, hyp = page_texts(page["boxes"], page["texts"], boxes, reading["texts"], scored(boxes, page["boxes"]))
    if not page["case_sensitive"]:
        ref, hyp = ref.lower(), hyp.lower()
    return match_count(boxes, page["boxes"]), len(page["boxes"]), edit_distance(ref, hyp), len(ref)


def reading_key(detector: Path, pages: list[dict], recognizer: Path | None = None) -> str:
    """A digest of what a reading of `pages` with `detector` depends on: the folder's files, the
    recognizer's (default: the shipped one) and the shipped orientation's, ocrkit's code and the page
    images (cards left out; the scoring, which readings do not depend on, too)."""
    models = [recognizer or PACKAGE / "models" / "recognizer", PACKAGE / "models" / "orientation"]
    files = sorted(PACKAGE.rglob("*.py"))
    for folder in [detector, *models]:
        files += sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix != ".md")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + path.read_bytes())
    for page in pages:
        digest.update(str(page["path"]).encode())
    return digest.hexdigest()[:20]


def read_counts(
    ocr_for, detector: Path, pages: list[dict], cache: Path | None, recognizer: Path | None = None
) -> np.ndarray:
    """(pages, 4) PageCounts of `detector` (with `recognizer`, default the shipped one) on `pages`, from
    the readings in `cache` when they are stored there; `ocr_for(detector)` builds the reader only when
    the pages must be read."""
    stored = cache / f"{reading_key(detector, pages, recognizer)}.json" if cache is not None else None
    if stored is not None and stored.is_file():
        return stored_counts(stored, pages)
    ocr = ocr_for(detector)
    readings = [page_reading(ocr, page) for page in pages]
    if stored is not None:
        write_atomic(stored, json.dumps(readings))
        print(f"{detector}: readings stored in {stored}")
    return counts_of(readings, pages)


def stored_counts(path: Path, pages: list[dict]) -> np.ndarray:
    """(pages, 4) PageCounts of the readings stored by an earlier run (a `--cache` file), which must hold
    one per page: the base read by other code, e.g. the same detector before a post-processing change."""
    readings = json.loads(path.read_text())
    if len(readings) != len(pages) or not all(isinstance(r, dict) for r in readings):
        raise SystemExit(f"{path}: holds no readings of the {len(pages)} pages judged")
    return counts_of(readings, pages)


def counts_of(readings: list[Reading], pages: list[dict]) -> np.ndarray:
    return np.array([page_counts(r, p) for r, p in zip(readings, pages, strict=True)], np.int64).reshape(
        -1, 4
    )


def subset_rows(pages: list[dict], base: np.ndarray, cand: np.ndarray) -> dict[str, dict]:
    """Per subset: recall and page CER of both, the paired SE of the CER difference over pages, and
    whether the candidate is worse by the rule. `base`/`cand`: (pages, 4) PageCounts in page order."""
    members: dict[str, list[int]] = defaultdict(list)
    for n, page in enumerate(pages):
        members[page["subset"]].append(n)
    rows = {}
    for name, idx in members.items():
        b, c = base[idx], cand[idx]
        lines, chars = int(b[:, 1].sum()), max(int(b[:, 3].sum()), 1)
        d = c[:, 2] - b[:, 2]
        se = float(np.sqrt(len(d) * d.var(ddof=1)) / chars) if len(d) > 1 else 0.0
        row = {
            "part": pages[idx[0]]["part"],
            "pages": len(idx),
            "lines": lines,
            "chars": chars,
            "recall_base": float(b[:, 0].sum() / max(lines, 1)),
            "recall_candidate": float(c[:, 0].sum() / max(lines, 1)),
            "cer_base": float(b[:, 2].sum() / chars),
            "cer_candidate": float(c[:, 2].sum() / chars),
            "se": se,
        }
        row["worse"] = lines >= MIN_LINES and (
            row["recall_base"] - row["recall_candidate"] > MAX_RECALL_LOSS
            or row["cer_candidate"] - row["cer_base"] > max(MIN_CER_RISE, 2 * se)
        )
        rows[name] = row
    return rows


def decide(rows: dict[str, dict]) -> tuple[dict[str, dict], bool]:
    """Both parts' page CER (over their characters) and the score, for base and candidate; whether the
    candidate ships."""
    summary = {}
    for key in ("base", "candidate"):
        part_cer = {}
        for part in ("unseen", "in-source"):
            picked = [r for r in rows.values() if r["part"] == part]
            part_cer[part] = sum(r[f"cer_{key}"] * r["chars"] for r in picked) / sum(
                r["chars"] for r in picked
            )
        summary[key] = {**part_cer, "score": 0.5 * part_cer["unseen"] + 0.5 * part_cer["in-source"]}
    ships = summary["candidate"]["score"] < summary["base"]["score"] and not any(
        r["worse"] for r in rows.values()
    )
    return summary, ships


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "candidate", type=Path, help="detector folder to judge (as `ocrkit models ship` writes it)"
    )
    ap.add_argument("--base", type=Path, default=Path("ocrkit/models/detector"))
    ap.add_argument(
        "--unseen",
        type=Path,
        nargs="+",
        default=[Path(f"data/unseen/pages/coco_{s}.json") for s in ("train", "val")],
    )
    ap.add_argument("--in-source", type=Path, nargs="+", default=[Path("data/real/pages/coco_val.json")])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--cache", type=Path, default=Path("eval/judge_cache"), help="per-page readings kept for reuse"
    )
    ap.add_argument("--no-cache", action="store_true", help="read both models, store nothing")
    ap.add_argument(
        "--base-reading",
        type=Path,
        help="the base's per-page readings stored by an earlier run (a --cache file), e.g. by the code "
        "before a post-processing change; the base is then not read",
    )
    ap.add_argument(
        "--candidate-rec",
        type=Path,
        help="recognizer folder the candidate is read with (default: the shipped one), to judge a reading "
        "setting of the recognizer through the pages: the candidate may then be the shipped detector",
    )
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    from ocrkit.pipeline import OCR

    pages = pages_of(args.unseen, "unseen") + pages_of(args.in_source, "in-source")
    cache = None if args.no_cache else args.cache

    def ocr_for(folder: Path, recognizer: Path | None = None) -> OCR:
        return OCR(det_model=folder, rec_model=recognizer, backend="torch", threads=args.threads)

    counts = {
        "base": stored_counts(args.base_reading, pages)
        if args.base_reading
        else read_counts(ocr_for, args.base, pages, cache),
        "candidate": read_counts(
            lambda folder: ocr_for(folder, args.candidate_rec),
            args.candidate,
            pages,
            cache,
            args.candidate_rec,
        ),
    }
    rows = subset_rows(pages, counts["base"], counts["candidate"])
    summary, ships = decide(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "subsets": rows, "ships": ships}, indent=1) + "\n")
    print("| subset | part | lines | recall | page CER | 2 SE |\n|---|---|---|---|---|---|")
    for name, r in rows.items():
        flag = " **worse**" if r["worse"] else ""
        print(
            f"| {name} | {r['part']} | {r['lines']} | {r['recall_base']:.3f} → {r['recall_candidate']:.3f} | "
            f"{r['cer_base']:.4f} → {r['cer_candidate']:.4f}{flag} | {2 * r['se']:.4f} |"
        )
    for key, s in summary.items():
        print(f"{key}: unseen {s['unseen']:.4f}  in-source {s['in-source']:.4f}  score {s['score']:.4f}")
    print("ships" if ships else "does not ship")


if __name__ == "__main__":
    main()
