"""`ocrkit infer --ray`: the outputs of `ocrkit infer --out`, with the pages read on a Ray cluster.

Ray Data spreads the list of pages over an actor pool; each actor loads the models once and returns the
rendered outputs of the pages it read, which this process writes as they arrive (same names, same
atomic writer as without --ray), so only the inputs and the model folders need to be visible to the
workers. Pages whose outputs all exist are skipped, which makes a rerun of the same command resume.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from pathlib import Path

import numpy as np

from ocrkit.commands.common import Failures, output_path
from ocrkit.commands.options import ocr_options, positive_int
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import Kind
from ocrkit.images.inputs import collect_inputs
from ocrkit.images.io import PageSource, load_page
from ocrkit.pages.formats import EXTENSIONS, render
from ocrkit.pages.outputs import prepare_out_dir, write_atomic
from ocrkit.util.errors import InputError, OcrkitError
from ocrkit.util.extras import require


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Ray (needs pip install 'ocrkit[ray]')")
    g.add_argument("--ray", action="store_true", help="read the pages on Ray (needs --out)")
    g.add_argument(
        "--ray-address", help="join this Ray cluster; default: a local Ray on this machine's cores"
    )
    g.add_argument(
        "--ray-actors",
        type=positive_int,
        help="actors holding the models, each using --threads CPUs (1 without --threads); "
        "default: as many as the cluster's CPUs allow",
    )


class PageReader:
    """A Ray actor: the models, loaded once, reading batches of pages into their rendered outputs."""

    def __init__(self, ocr_options: dict, formats: list[str]) -> None:
        from ocrkit.pipeline import OCR

        self.ocr = OCR(**ocr_options)
        self.formats = formats

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        sources = [source_of(row) for row in _rows(batch)]
        where, problems = [s.label for s in sources], [""] * len(sources)
        out = {f"out_{fmt}": np.empty(len(sources), dtype=object) for fmt in self.formats}
        pages = self.ocr.read_many(sources, pages_per_batch=len(sources))
        for i, (source, page) in enumerate(zip(sources, pages, strict=True)):
            if isinstance(page, InputError):
                where[i], problems[i] = page.path, page.problem
                continue
            try:
                for fmt in self.formats:
                    image = load_page(source) if fmt == "overlay" else None
                    rendered = render(page, fmt, image)
                    out[f"out_{fmt}"][i] = rendered.encode("utf-8") if isinstance(rendered, str) else rendered
            except Exception as exc:  # noqa: BLE001 - reported for this page, the batch goes on
                problems[i] = f"{exc.__class__.__name__}: {exc}"
        for column in out.values():
            column[[i for i, p in enumerate(problems) if p]] = b""
        return {**batch, "where": np.array(where), "problem": np.array(problems), **out}


def run_ray(args: argparse.Namespace, formats: list[str]) -> int:
    if args.out is None:
        raise OcrkitError("--ray needs --out DIR: the outputs of every page are written there")
    prepare_out_dir(args.out)  # before Ray starts: a bad --out is one line, a killed run's temp files go
    ray = require("ray", "ray", "ocrkit infer --ray")
    require("ray.data", "ray", "ocrkit infer --ray")
    failures = Failures(args.debug)
    todo, skipped, total = _plan(args.paths, args.out, [EXTENSIONS[f] for f in formats], failures)
    started = time.perf_counter()
    done, actors = 0, 0
    if todo:
        we_started = not ray.is_initialized()
        if we_started:
            # Ray's own notices (token set-up, disabled progress bars) are not the user's business: ocrkit
            # reports every failed page and ends with its summary line; Ray's errors still show
            ray.init(address=args.ray_address, include_dashboard=False, logging_level=logging.ERROR)
            logging.getLogger("ray.data").setLevel(logging.ERROR)
        try:
            threads = args.threads or 1
            actors = args.ray_actors or max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
            actors = min(actors, blocks_of(len(todo), args.pages_per_batch))  # an actor per batch at most
            for row in _dataset(ray, todo, args, formats, threads, actors).iter_rows():
                source = source_of(row)
                if row["problem"]:
                    failures.report(row["where"], InputError(row["where"], row["problem"]))
                    continue
                for fmt in formats:
                    write_atomic(output_path(args.out, source, EXTENSIONS[fmt]), row[f"out_{fmt}"])
                done += 1
        except ray.exceptions.RayError as exc:
            raise OcrkitError(f"the Ray batch stopped: {str(exc).strip().splitlines()[-1]}") from None
        finally:
            if we_started:
                ray.shutdown()
    seconds = time.perf_counter() - started
    rate = done / max(seconds, 1e-9)
    print(
        f"ocrkit: {done} pages read on {actors} Ray actors in {seconds:.1f} s ({rate:.2f} pages/s), "
        f"{skipped} skipped (outputs exist), {failures.count} failed",
        file=sys.stderr,
    )
    return failures.exit_code(total)


def blocks_of(pages: int, pages_per_batch: int) -> int:
    """The dataset's blocks: one per batch of pages."""
    return max(1, math.ceil(pages / pages_per_batch))


def source_of(row: dict) -> PageSource:
    """A Ray row (plain values) back into the page it names."""
    return PageSource(
        Path(row["path"]), str(row["name"]), int(row["page"]), int(row["pages"]), bool(row["is_pdf"])
    )


def _rows(batch: dict[str, np.ndarray]) -> list[dict]:
    keys = ("path", "name", "page", "pages", "is_pdf")
    return [dict(zip(keys, values, strict=True)) for values in zip(*(batch[k] for k in keys), strict=True)]


def _plan(
    paths: list[str], out: Path, extensions: list[str], failures: Failures
) -> tuple[list[dict], int, int]:
    """Pages still to read (as rows for Ray Data), pages skipped because all their outputs exist, and the
    number of inputs (pages and unreadable files) for the exit summary."""
    inputs = collect_inputs(paths)
    todo, skipped = [], 0
    for item in inputs.items:
        if isinstance(item, InputError):
            failures.report(item.path, item)
        elif all(output_path(out, item, ext).is_file() for ext in extensions):
            skipped += 1
        else:
            todo.append(
                {
                    "path": str(item.path.resolve()),
                    "name": item.name,
                    "page": item.page,
                    "pages": item.pages,
                    "is_pdf": item.is_pdf,
                }
            )
    total = inputs.total
    return todo, skipped, total


def _dataset(ray, todo: list[dict], args: argparse.Namespace, formats: list[str], threads: int, actors: int):
    """The pages → outputs dataset: a fixed pool of `actors` PageReaders, `threads` CPUs each."""

    def absolute(name_or_path: Path | None, kind: Kind) -> str | None:
        """The folder as an absolute path, which actors in other working folders can open."""
        return None if name_or_path is None else str(zoo.resolve(name_or_path, kind).resolve())

    options = {
        **ocr_options(args),
        "det_model": absolute(args.det_model, "detector"),
        "rec_model": absolute(args.rec_model, "recognizer"),
        "threads": threads,
    }
    blocks = blocks_of(len(todo), args.pages_per_batch)
    context = ray.data.DataContext.get_current()  # ocrkit says what was read in its own summary line
    context.enable_progress_bars = sys.stderr.isatty()
    context.print_on_execution_start = False
    return ray.data.from_items(todo, override_num_blocks=blocks).map_batches(
        PageReader,
        batch_size=args.pages_per_batch,
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=threads,
        fn_constructor_kwargs={"ocr_options": options, "formats": formats},
    )
