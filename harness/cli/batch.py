"""`stateact batch --instruction "…" FILES… --out DIR`: one instruction over many office files."""

from __future__ import annotations

import sys
from collections import Counter

from harness.apps.batch import SUMMARY_NAME, BatchOptions, expand_inputs, run_batch
from harness.models import make_model

from .progress import RunsProgress
from .ray_options import add_ray_options, ray_options
from .run import add_run_options, build_config


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="run one instruction over many files, each in its own sandbox and through the gate",
        description="Copy each file to /home/user/<name> in a fresh sandbox, run the instruction "
        "on it ({file}, {name} and {stem} are filled in; without {file} the path is appended), "
        "check it with the finish gate, and copy the result to OUT/<name> (or the file the "
        "instruction names). Writes OUT/summary.csv and a run directory per file under OUT/runs/. "
        "Exit 0 when every file passed the gate, 1 otherwise, 2 on bad input.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="input files or glob patterns (quoted)"
    )
    parser.add_argument("--instruction", required=True, help="what to do with each file")
    add_run_options(parser)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--parallel", type=int, default=1, help="files run at the same time (default 1)"
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep finished files in --out and run the rest"
    )
    parser.add_argument(
        "--check", metavar="TASK.json", help="score every output with this task's evaluator"
    )
    add_ray_options(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    files = expand_inputs(args.files)  # bad patterns fail before anything starts
    config = build_config(args)
    ray = ray_options(args)
    make_model(config.model, config.model_options)  # fail fast on a bad spec or missing key
    with RunsProgress("batch", len(files)) as progress:
        options = BatchOptions(
            parallel=args.parallel,
            resume=args.resume,
            check=args.check,
            on_result=lambda row: batch_progress_row(progress, row),
            ray=ray,
        )
        rows = run_batch(args.instruction, files, args.out, config, options)
    passed = sum(row["gate_passed"] is True for row in rows)
    statuses = ", ".join(
        f"{n} {status}" for status, n in Counter(row["status"] for row in rows).items()
    )
    cost = sum(float(row["cost_usd"] or 0) for row in rows)
    print(f"{passed}/{len(rows)} files passed the gate ({statuses}); ${cost:.4f}")
    print(f"summary: {args.out}/{SUMMARY_NAME}", file=sys.stderr)
    return 0 if passed == len(rows) else 1


def batch_progress_row(progress: RunsProgress, row: dict) -> None:
    """Count one finished file of a batch (called from the batch's worker threads)."""
    name = str(row.get("file", "?")).rsplit("/", 1)[-1]
    error = f" ({str(row['error'])[:160]})" if row.get("error") else ""
    progress.advance(
        name, str(row.get("status")), row.get("gate_passed") is True, row.get("cost_usd"), error
    )
