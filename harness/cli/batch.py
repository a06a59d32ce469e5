"""`stateact batch --instruction "…" FILES… --out DIR`: one instruction over many office files."""

from __future__ import annotations

import sys
from collections import Counter

from harness.apps.batch import SUMMARY_NAME, BatchOptions, expand_inputs, run_batch
from harness.apps.outdir import error_sentence, exit_code, parse_fail_on_error
from harness.apps.sandbox_options import add_warm_option, pool_config
from harness.kernel.core import StateActError
from harness.models import make_model
from harness.models.pricing import check_cost_cap

from .config_file import apply_run_config
from .progress import RunsProgress
from .ray_options import add_ray_options, ray_options
from .run import add_config_options, add_run_options, build_config

__all__ = ["apply_run_config", "register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="run one instruction over many files, each in its own sandbox and through the gate",
        description="Copy each file to /home/user/<name> in a fresh sandbox, run the instruction "
        "on it ({file}, {name} and {stem} are filled in; without {file} the path is appended), "
        "check it with the finish gate, and copy the result to OUT/<name> (or the file the "
        "instruction names). Writes OUT/summary.csv and a run directory per file under OUT/runs/. "
        "Exit 0 when every file reached a verdict (passed or not), 1 when any ended in an error "
        "(model, sandbox, setup; see --fail-on-error), 2 on bad input (or OUT held by another "
        "run).",
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
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --resume: continue although OUT was run with another model, preset or "
        "control mode",
    )
    parser.add_argument(
        "--fail-on-error",
        metavar="N|FRACTION",
        help="exit 0 unless more than N files (N >= 1) or more than FRACTION of them (< 1) "
        "ended in an error (default: any error exits 1)",
    )
    add_config_options(parser)
    add_warm_option(parser)
    add_ray_options(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    files = expand_inputs(args.files)  # bad patterns fail before anything starts
    config = build_config(args)
    ray = ray_options(args)
    fail_on_error = parse_fail_on_error(args.fail_on_error)
    pool_config(args.warm, config.sandbox, ray)  # before the model is built or anything starts
    if args.force and not args.resume:
        raise StateActError("--force goes with --resume.")
    model = make_model(config.model, config.model_options)  # fail fast on a bad spec or key
    check_cost_cap(model, config.model, config.loop.max_cost_usd)
    with RunsProgress("batch", len(files)) as progress:
        options = BatchOptions(
            parallel=args.parallel,
            resume=args.resume,
            check=args.check,
            on_result=lambda row: batch_progress_row(progress, row),
            ray=ray,
            force=args.force,
            warm=args.warm,
        )
        rows = run_batch(args.instruction, files, args.out, config, options)
    passed = sum(row["gate_passed"] is True for row in rows)
    statuses = ", ".join(
        f"{n} {status}" for status, n in Counter(row["status"] for row in rows).items()
    )
    cost = sum(float(row["cost_usd"] or 0) for row in rows)
    unpriced = sum(1 for row in rows if row["cost_usd"] is None)
    cost_text = f"${cost:.4f}" + (f" + {unpriced} file(s) of unknown cost" if unpriced else "")
    print(f"{passed}/{len(rows)} files passed the gate ({statuses}); {cost_text}")
    code = exit_code(rows, fail_on_error)
    if error_sentence(rows):
        tolerated = "" if code else " (within --fail-on-error)"
        print(
            f"stateact: {error_sentence(rows).replace('task(s)', 'file(s)')}{tolerated}",
            file=sys.stderr,
        )
    print(f"summary: {args.out}/{SUMMARY_NAME}", file=sys.stderr)
    return code


def batch_progress_row(progress: RunsProgress, row: dict) -> None:
    """Count one finished file of a batch (called from the batch's worker threads)."""
    name = str(row.get("file", "?")).rsplit("/", 1)[-1]
    error = f" ({str(row['error'])[:160]})" if row.get("error") else ""
    progress.advance(
        name, str(row.get("status")), row.get("gate_passed") is True, row.get("cost_usd"), error
    )
