"""What `run` and `suite` do with `--osworld2`: a task module through the benchmark's own code,
the task list of the user's data, and the dry run's blockers."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from harness.apps.osworld2_options import osworld2_config, sandbox_image
from harness.apps.osworld2_run import run_osworld2_task
from harness.apps.osworld2_services import osworld2_services, require_sandbox_image
from harness.apps.osworld2_suite import osworld2_dry_run, osworld2_task_paths
from harness.apps.run_options import config_from_options, options_from_args, render_trajectory
from harness.kernel.core import StateActError
from harness.kernel.display import visible
from harness.kernel.records import safe_run_name
from harness.models import make_model
from harness.models.pricing import check_cost_cap
from harness.run.config import RunConfig
from sandboxes.images.apps import declared_apps, definition_name
from tasks.coverage import blocker_summary, blocker_table
from tasks.support import reason_kind

from .progress import TurnProgress


def build_config(args) -> RunConfig:
    return config_from_options(options_from_args(args))


OK_STATUSES = ("completed", "infeasible")


def run_task_module(args, config: RunConfig) -> int:
    """`stateact run task_<id>.py --osworld2 CHECKOUT`: one task module, phase by phase."""
    if config.osworld2 is None:
        raise StateActError(
            f"{args.task} is an OSWorld 2.0 task module: add --osworld2 PATH (your OSWorld-V2 "
            "checkout; docs/osworld2.md)."
        )
    model = make_model(config.model, config.model_options)  # a bad spec or key fails now
    check_cost_cap(model, config.model, config.loop.max_cost_usd)
    require_sandbox_image(config)
    task_file = Path(args.task)
    out = Path(args.out or Path("runs") / safe_run_name(task_file.stem))
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise StateActError(
            f"the run directory {out} is not empty; pass --resume to continue it or "
            "choose another --out."
        )
    if args.resume and (out / "result.json").is_file():  # finished: its result stands
        result = json.loads((out / "result.json").read_text())
    else:  # an unfinished run goes on after its last judged phase (its snapshot), if it has one
        with osworld2_services(config) as started, TurnProgress(task_file.stem) as progress:
            result = run_osworld2_task(
                task_file, started, out, model=model, on_turn=progress.update
            )
    render_trajectory(out)
    keys = ("task_id", "status", "score", "partial_score", "phases_judged", "cost_usd")
    print(json.dumps({key: result.get(key) for key in keys}))
    if result.get("error"):
        print(f"stateact: {result['status']}: {visible(result['error'])}", file=sys.stderr)
    print(f"run directory: {out}", file=sys.stderr)
    return 0 if result["status"] in OK_STATUSES else 1


def suite_entry(args) -> int | None:
    """What `suite` does first: with `--osworld2`, its task list (the dry run's report, whose exit
    code is returned; or `args.paths` set to the task modules to run); None to go on."""
    if args.osworld2 is None:
        if not args.paths:
            raise StateActError("give task files or folders (PATH…), or --osworld2 with its data.")
        return None
    if args.model:
        config = build_config(args)
    else:  # a dry run needs no model
        config = RunConfig(model="none", osworld2=osworld2_config(options_from_args(args)))
    if args.dry_run:
        return dry_run_report(args, config)
    args.paths = suite_paths(args, config)
    if not args.ray:  # a Ray node builds or loads the image itself
        require_sandbox_image(config)
    return None


def suite_paths(args, config: RunConfig) -> list[str]:
    """The task modules `suite --osworld2` runs: those under PATH…, else all of the data's."""
    paths = osworld2_task_paths(config.osworld2, list(args.paths))
    if not paths and not args.dry_run:
        raise StateActError(
            "no OSWorld 2.0 task modules to run: give --osworld2-data PATH (the downloaded "
            "xlangai/osworld_v2_tasks) or task_*.py files; `--dry-run` lists what is missing."
        )
    return [str(path) for path in paths]


def dry_run_report(args, config: RunConfig) -> int:
    """`suite --dry-run --osworld2`: a line per task (or per blocker), the blockers on stderr."""
    image = sandbox_image(args)  # the one a run would take: osworld2 unless --image says
    apps = declared_apps(image) if args.sandbox == "docker" else None
    paths = [Path(p) for p in suite_paths(args, config)]
    records, blockers = osworld2_dry_run(config.osworld2, paths, apps, definition_name(image))
    for record in records if not args.by_blocker else []:
        print(json.dumps(record), flush=True)
    if not records:  # nothing to list: the suite-wide blockers are the whole answer
        for blocker in blockers:
            print(json.dumps({"blocker": blocker, "tasks": 0}), flush=True)
        _say(f"no OSWorld 2.0 task to list; {len(blockers)} blocker(s):")
        for blocker in blockers:
            _say(f"  {blocker}")
        return 0
    rows = blocker_summary(records)
    if args.by_blocker:
        for row in rows:
            print(json.dumps(row.as_json()), flush=True)
    counts = Counter("runnable" if r["runnable"] else reason_kind(r["reason"]) for r in records)
    _say(f"{len(records)} task(s): " + ", ".join(f"{k} {n}" for k, n in counts.most_common()))
    _say(blocker_table(rows, len(records), counts.get("runnable", 0)))
    return 0


def _say(text: str) -> None:
    print(visible(text, keep_lines=True), file=sys.stderr, flush=True)
