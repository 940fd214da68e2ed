"""`ocrkit synth pages|lines|fonts`: render synthetic training data (COCO pages or a line-crop manifest),
or install more training faces from Debian and npm font packages."""

from __future__ import annotations

import argparse
import json

from ocrkit.commands.options import existing_file, folder, non_negative_int, positive_int
from ocrkit.util.errors import OcrkitError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="render synthetic pages (COCO) or line crops (lines.jsonl)")
    kinds = p.add_subparsers(dest="what", metavar="pages|lines|fonts", required=True)
    for what, helptext in (
        ("pages", "page images + coco.json (one box per text line, with its text)"),
        ("lines", "line crops + lines.jsonl, cut like detector crops"),
    ):
        q = kinds.add_parser(what, help=helptext)
        q.add_argument("--n", type=positive_int, required=True, help=f"number of {what}")
        q.add_argument("--out", type=folder, required=True, help="folder to write the images and labels into")
        q.add_argument(
            "--seed", type=non_negative_int, default=0, help="same seed → same data, whatever --workers"
        )
        q.add_argument("--workers", type=positive_int, default=1, help="processes rendering in parallel")
        q.add_argument("--preview", type=folder, help="also draw boxes/texts of the first items here")
        q.add_argument("--clean", action="store_true", help="no degradations (black text on white)")
        q.add_argument(
            "--layouts",
            help="comma-separated layout weights, e.g. receipt=1,prose=0.5 "
            "(receipt, prose, table, form, letter, fraktur, handwriting)",
        )
        if what == "lines":
            q.add_argument(
                "--page-scale",
                help="LOW,HIGH: each source page is rendered this many times larger than a detector page, "
                "so crops are as many pixels tall as lines on real scans (default 1.0,2.6)",
            )
            q.add_argument(
                "--blank-share",
                type=float,
                help='share of crops with no text (target ""), cut from the same pages beside their lines, '
                "so a recognizer learns to read a detector's false boxes as nothing (default 0.05)",
            )
            q.add_argument(
                "--fonts",
                type=existing_file,
                help="fonts.json of `ocrkit synth fonts`: its faces join the shipped ones "
                "(default: the shipped faces only)",
            )
        q.set_defaults(func=run)
    q = kinds.add_parser(
        "fonts",
        help="install more training faces from Debian and npm font packages (not committed)",
        description="Download the Debian (apt-get download) and npm @fontsource (registry tarballs, "
        "pinned) font packages that ocrkit/data/synth/font_packages.yaml lists, copy each listed face "
        "that draws basic Latin into OUT/<package>/ with its licence text, and write OUT/fonts.json for "
        "`ocrkit synth lines --fonts`.",
    )
    q.add_argument("--out", type=folder, required=True, help="folder for the faces and fonts.json")
    q.set_defaults(func=run_fonts)


def run_fonts(args: argparse.Namespace) -> int:
    from ocrkit.data.synth.font_install import install_fonts

    manifest = install_fonts(args.out)
    faces = sum(len(files) for files in manifest["styles"].values())
    print(
        json.dumps(
            {"faces": faces, "packages": len(manifest["packages"]), "out": str(args.out / "fonts.json")}
        )
    )
    return 0 if faces else 1


def _parse_layouts(spec: str | None) -> dict[str, float] | None:
    from ocrkit.data.synth.layouts import KINDS

    if not spec:
        return None
    weights = {}
    for item in spec.split(","):
        name, _, w = item.partition("=")
        if name.strip() not in KINDS:
            raise OcrkitError(f"--layouts: unknown layout {name.strip()!r} (known: {', '.join(KINDS)})")
        try:
            weights[name.strip()] = float(w or 1)
        except ValueError as exc:
            raise OcrkitError(f"--layouts: weight of {name.strip()!r} is not a number: {w!r}") from exc
    return weights


def _parse_scale(spec: str | None) -> tuple[float, float]:
    from ocrkit.data.synth.generate import LINE_PAGE_SCALE

    if spec is None:
        return LINE_PAGE_SCALE
    low, _, high = spec.partition(",")
    try:
        scale = (float(low), float(high or low))
    except ValueError:
        raise OcrkitError(f"--page-scale: expected LOW,HIGH numbers, got {spec!r}") from None
    if not 0 < scale[0] <= scale[1]:
        raise OcrkitError(f"--page-scale: need 0 < LOW <= HIGH, got {spec!r}")
    return scale


def run(args: argparse.Namespace) -> int:
    from ocrkit.data.synth.generate import generate_lines, generate_pages

    common = {
        "seed": args.seed,
        "workers": args.workers,
        "degrade": not args.clean,
        "kinds": _parse_layouts(args.layouts),
        "preview_dir": args.preview,
    }
    if args.what == "pages":
        stats = generate_pages(args.out, args.n, **common)
    else:
        if args.blank_share is not None:
            if not 0.0 <= args.blank_share < 1.0:
                raise OcrkitError(f"--blank-share: expected a share in [0, 1), got {args.blank_share}")
            common["blank_share"] = args.blank_share
        stats = generate_lines(
            args.out, args.n, page_scale=_parse_scale(args.page_scale), fonts=args.fonts, **common
        )
    print(json.dumps(stats))
    return 0
