"""`stateact suite PATH… --model M`: run many tasks headlessly, N at a time, into one suite
directory."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from harness.apps.oracle import NOTICE, ORACLE_SPEC, is_oracle, solution_path
from harness.apps.osworld2_options import add_osworld2_options, osworld2_config, sandbox_image
from harness.apps.outdir import ERROR_STATUSES, ResultsFile, parse_fail_on_error, summary_exit_code
from harness.apps.ray.suite import run_suite_on_ray
from harness.apps.sandbox_options import add_warm_option, pool_config
from harness.apps.selection import Selection, SuiteOptions
from harness.apps.suite import (
    discover_tasks,
    foreign_build_scripts,
    run_suite,
    task_domain,
    task_name,
)
from harness.apps.suite import dry_run as run_dry
from harness.kernel.core import StateActError, require_one_of
from harness.kernel.display import visible
from harness.models import make_model
from harness.models.pricing import check_cost_cap
from harness.reports.summary import summary_line
from sandboxes import BACKENDS
from sandboxes.images.apps import declared_apps, definition_name
from tasks.coverage import blocker_summary, blocker_table, coverage_table, evaluator_coverage
from tasks.schema import load_task
from tasks.support import reason_kind
from tasks.webarena.deployment import active as webarena_deployment
from tasks.webarena.deployment import configure as configure_webarena

from .config_file import apply_run_config
from .osworld2_tasks import suite_entry as osworld2_suite
from .progress import RunsProgress
from .ray_options import add_ray_options, ray_options
from .run import add_config_options, add_run_options, add_selection_options, build_config

DEMO_DOMAINS = ("calc", "writer", "os", "db", "x")
DEMO_MODEL = "anthropic/claude-sonnet-4-5"
DEMO_PARALLEL = 2


__all__ = ["apply_run_config", "register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "suite",
        help="run a suite of tasks (or list what would run with --dry-run)",
        description="Run every task file under PATH… (folders are searched recursively), each in "
        "its own sandbox, N at a time. Writes OUT/results.jsonl, OUT/summary.json, OUT/report.html "
        "and one run directory per task under OUT/runs/ (and OSWorld's layout under OUT/results/). "
        f"`--model {ORACLE_SPEC}` plays each task's reference "
        "solution instead of a model (to check a suite end to end). Exit 0 when every task "
        "reached a verdict (whatever the scores), 1 when any ended in an error (model, sandbox, "
        "setup, task file; see --fail-on-error), 2 on bad input (or OUT held by another run).",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="task files or folders of task files (with --osworld2: task modules; default all "
        "of --osworld2-data)",
    )
    add_run_options(parser)
    add_selection_options(parser)
    add_osworld2_options(parser)
    for action in parser._actions:  # --dry-run and --demo need no model
        if action.dest == "model":
            action.required = False
            action.default = None
    parser.add_argument(
        "--parallel", type=int, help="tasks run at the same time (default 1; 2 with --demo)"
    )
    parser.add_argument("--out", help="suite directory (default runs/suite)")
    parser.add_argument(
        "--resume", action="store_true", help="keep finished runs in --out and rerun the rest"
    )
    add_out_options(parser)
    add_task_selection(parser)
    add_config_options(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print one JSON line per task (runnable, or every reason why not), then one per "
        "blocker with how many tasks it stops (a table of them on stderr), and stop",
    )
    parser.add_argument(
        "--by-blocker",
        action="store_true",
        help="with --dry-run: print one JSON line per blocker (how many tasks it stops, how many "
        "it alone stops) instead of one per task",
    )
    parser.add_argument(
        "--build-fixtures",
        action="store_true",
        help="with --dry-run, run the build.py of suites that did not ship with StateAct",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="with --dry-run: print instead every metric and getter the tasks use, implemented or "
        "missing, with how many tasks use it",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help=f"a small varied slice; model {DEMO_MODEL} with ANTHROPIC_API_KEY, else the oracle",
    )
    add_warm_option(parser)
    add_ray_options(parser)
    parser.set_defaults(handler=run)


def run(args) -> int:
    if args.by_blocker and not args.dry_run:
        raise StateActError("--by-blocker goes with --dry-run (it counts what stops the tasks).")
    if args.summary and not args.dry_run:
        raise StateActError("--summary goes with --dry-run (it lists what the tasks use).")
    if (listed := osworld2_suite(args)) is not None:  # OSWorld 2.0's dry run
        return listed
    if args.summary:
        return coverage_summary(args)
    if args.dry_run:
        return blockers_report(args)

    paths = list(args.paths)
    if args.demo:
        args.model = args.model or (
            DEMO_MODEL if os.environ.get("ANTHROPIC_API_KEY") else ORACLE_SPEC
        )
        paths = demo_slice(discover_tasks(paths), oracle=is_oracle(args.model))
    if not args.model:
        raise StateActError(
            f"--model is required (PROVIDER/NAME, or {ORACLE_SPEC} to play the "
            "reference solutions)."
        )
    config = build_config(args)
    ray = ray_options(args)
    if is_oracle(config.model):
        say(
            f"{NOTICE} Scores show whether the tasks, fixtures and checkers work, not "
            "how good a model is."
        )
        if args.demo:
            say(
                "No ANTHROPIC_API_KEY is set, so the demo uses the oracle. To run it "
                "on a real model:\n"
                f"  ANTHROPIC_API_KEY=… stateact suite {' '.join(args.paths)} --demo "
                f"--model {DEMO_MODEL} --out runs/demo-model"
            )
    else:
        # a bad spec, a missing key or a cost cap on an unpriced model fails before any sandbox
        model = make_model(config.model, config.model_options)
        check_cost_cap(model, config.model, config.loop.max_cost_usd)
    out = Path(args.out or "runs/suite")
    parallel = args.parallel or (DEMO_PARALLEL if args.demo else 1)
    where = f"on the Ray cluster {ray.address}" if ray else f"{parallel} at a time"
    say(
        f"running {len(paths) if args.demo else 'the'} task(s) with {config.model}, "
        f"{where}, into {out}"
    )
    options = suite_options(args)
    pool_config(options.warm, config.sandbox, ray)
    fail_on_error = parse_fail_on_error(args.fail_on_error)
    if ray is not None:
        local_only(options, config)
    selected = options.selection.apply(discover_tasks(paths), task_name)
    total = len(selected) * options.selection.trials
    if args.resume:  # finished tasks are kept without a progress report; count only the rest
        kept = ResultsFile(out / "results.jsonl").latest()
        if options.retry_errors:
            kept = [row for row in kept if row.get("status") not in ERROR_STATUSES]
        total = max(0, total - len(kept))
    try:
        with RunsProgress("suite", total) as progress:
            common = dict(
                parallel=parallel,
                resume=args.resume,
                on_result=lambda line: suite_progress_line(progress, line),
                suite_options=options,
            )
            if ray is None:
                summary = run_suite(paths, config, out, **common)
            else:
                summary = run_suite_on_ray(paths, config, out, ray, **common)
    except KeyboardInterrupt:
        say(
            "stopped; finished tasks are kept. Continue with the same command and "
            f"--resume --out {out}"
        )
        raise
    return _report(summary, out, fail_on_error)


def local_only(options, config) -> None:
    """Refuse what runs on the local runner only, for a suite on Ray."""
    if options.selection.trials > 1:
        raise StateActError("--trials runs on the local runner only; leave out --ray or --trials.")
    if config.osworld2 is not None and config.osworld2.starts_services:
        raise StateActError(
            "OSWorld 2.0's services start on the local runner only; leave out --ray, or start "
            "them on each node yourself and set WEBSITE_HOST_SUFFIX."
        )


def _report(summary: dict, out: Path, fail_on_error) -> int:
    """Print a finished suite's summary line, its errors and where its report is; the exit code."""
    print(summary_line(summary))
    code = summary_exit_code(summary, fail_on_error)
    if summary.get("errors"):
        say(
            f"{summary['errors']} of {summary['tasks']} task(s) ended in an error ("
            + ", ".join(
                f"{status} {n}"
                for status, n in summary["status_counts"].items()
                if status in ERROR_STATUSES
            )
            + f"); rerun them with --resume --retry-errors --out {out}"
            + ("" if code else " (within --fail-on-error)")
        )
    print(f"report: {out / 'report.html'}")
    return code


def add_out_options(parser) -> None:
    """OUT handling and exit codes, shared by `suite` and `batch`."""
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume: run again the tasks whose last run ended in an error (earlier "
        "attempts stay in results.jsonl and OUT/history/; the summary counts the latest)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --resume: continue although OUT was run with another model, preset, control "
        "mode or task set",
    )
    parser.add_argument(
        "--fail-on-error",
        metavar="N|FRACTION",
        help="exit 0 unless more than N tasks (N >= 1) or more than FRACTION of them (< 1) "
        "ended in an error (default: any error exits 1)",
    )


def add_task_selection(parser) -> None:
    """--filter, --shuffle, --slice (applied in that order) and --trials."""
    parser.add_argument(
        "--filter", metavar="REGEX", help="only tasks whose id matches REGEX (re.search)"
    )
    parser.add_argument(
        "--shuffle", type=int, metavar="SEED", help="shuffle the tasks with this seed"
    )
    parser.add_argument(
        "--slice",
        metavar="A:B",
        help="the tasks A..B-1 (0-based, Python slice; after --filter and --shuffle)",
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=1,
        metavar="K",
        help="run each task K times (runs/<id>.trial-N); the summary adds pass@1 with its "
        "standard error and pass@k",
    )


def suite_options(args) -> SuiteOptions:
    selection = Selection(
        filter=args.filter, slice=args.slice, shuffle=args.shuffle, trials=args.trials
    )
    if (args.retry_errors or args.force) and not args.resume:
        raise StateActError("--retry-errors and --force go with --resume.")
    return SuiteOptions(
        selection=selection, retry_errors=args.retry_errors, force=args.force, warm=args.warm
    )


def suite_progress_line(progress: RunsProgress, line: dict) -> None:
    """Count one finished task of a suite (called from the suite's worker threads)."""
    score = line.get("score")
    score_text = f" score {score:.3f}" if isinstance(score, int | float) else " score -"
    error = f" ({str(line['error'])[:160]})" if line.get("error") else ""
    progress.advance(
        str(line.get("task_id")),
        str(line.get("status")),
        bool(line.get("success")),
        line.get("cost_usd"),
        score_text + error,
    )


def say(text: str) -> None:
    print(visible(text, keep_lines=True), file=sys.stderr, flush=True)


def demo_slice(task_paths: list[Path], oracle: bool) -> list[Path]:
    """One task per demo domain (calc, writer, os, sqlite, cross-app); with the oracle, one it
    can solve."""
    chosen: dict[str, tuple[Path, bool]] = {}
    for path in task_paths:
        try:
            task = load_task(path)
        except StateActError:
            continue
        domain = task_domain(task, path)
        solvable = solution_path(task) is not None and "infeasible" not in task.evaluator.funcs
        if domain in DEMO_DOMAINS and (
            domain not in chosen or (oracle and solvable and not chosen[domain][1])
        ):
            chosen[domain] = (path, solvable)
    if not chosen:
        raise StateActError(
            "--demo found none of its tasks (calc, writer, os, db, x) in the given "
            "paths; point it at tasks/suites/longhorizon."
        )
    return [chosen[d][0] for d in DEMO_DOMAINS if d in chosen]


def dry_run(args) -> list[dict]:
    """The dry run's records; each task's line on stdout unless --by-blocker asks for the rows."""

    def emit(record: dict) -> None:
        if not args.by_blocker:
            print(json.dumps(record), flush=True)

    if not args.build_fixtures:
        for script in foreign_build_scripts(discover_tasks(args.paths)):
            say(f"not running {script} (suite code); pass --build-fixtures to build its fixtures.")
    require_one_of("sandbox backend", args.sandbox, BACKENDS)
    configure_webarena(args.sites, args.parallel, args.cache)  # WebArena tasks' blockers
    osworld2_config(args)  # --judge-model needs --osworld2 or --sites
    webarena_deployment().judge_named = bool(args.sites and args.judge_model)
    if args.sandbox != "docker":
        say(
            f"applications are not checked: the {args.sandbox} backend runs this "
            "machine's programs."
        )
    return run_dry(
        args.paths,
        Path(args.cache) if args.cache else None,
        emit,
        build_fixtures=args.build_fixtures,
        allow_host_paths=args.allow_host_paths,
        apps=declared_apps(sandbox_image(args)) if args.sandbox == "docker" else None,
        image=definition_name(sandbox_image(args)),
        network=args.network,
        agent_sudo=args.agent_sudo,
    )


def blockers_report(args) -> int:
    """`--dry-run`: a line per task (or per blocker with --by-blocker) on stdout; on stderr the
    count by first reason's kind and the table of blockers."""
    records = dry_run(args)
    rows = blocker_summary(records)
    if args.by_blocker:
        for row in rows:
            print(json.dumps(row.as_json()), flush=True)
    counts = Counter(
        "runnable" if record["runnable"] else reason_kind(record["reason"]) for record in records
    )
    say(f"{len(records)} task(s): " + ", ".join(f"{kind} {n}" for kind, n in counts.most_common()))
    runnable = counts.get("runnable", 0)
    say(blocker_table(rows, len(records), runnable))
    return 0


def coverage_summary(args) -> int:
    """`--dry-run --summary`: the metric and getter table (stdout) and its totals (stderr)."""
    coverage = evaluator_coverage(discover_tasks(args.paths))
    print(coverage_table(coverage), flush=True)
    metrics = [row for row in coverage.rows if row.kind == "metric"]
    getters = [row for row in coverage.rows if row.kind == "getter"]
    say(
        f"{coverage.tasks} task(s): metrics {sum(r.implemented for r in metrics)} of "
        f"{len(metrics)} implemented, getters {sum(r.implemented for r in getters)} of "
        f"{len(getters)}; {coverage.covered} task(s) use only implemented ones"
        + (f"; {coverage.unreadable} unreadable task file(s)" if coverage.unreadable else "")
    )
    return 0
