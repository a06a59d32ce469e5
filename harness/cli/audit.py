"""`stateact audit PATH…`: play the built-in adversarial agents against every task of a suite and
report the tasks any of them games."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from harness.apps.audit import run_audit
from harness.apps.audit_agents import ADVERSARIES
from harness.kernel.core import StateActError
from harness.run.config import RunConfig

MAX_PARALLEL = 8


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="play built-in adversarial agents against a suite and report the tasks they game",
        description=(
            "Play scripted adversarial agents (no model) against every task under PATH…: "
            f"{', '.join(ADVERSARIES)}. Each runs the suite as `stateact suite` does, into "
            "OUT/<agent>/. Prints one JSON line per task an agent gamed (scored above the "
            "do-nothing agent, or got a gate pass from a gate model that judges nothing itself), "
            "with the agent naming the vector, then a table of every task; OUT/audit.jsonl holds "
            "every row, OUT/audit.md the table. Exit 0 when every run reached a verdict, 1 when "
            "any ended in an error, 2 on bad input."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="task files or folders of them")
    parser.add_argument("--out", default="runs/audit", help="audit folder (default runs/audit)")
    parser.add_argument("--image", default="desktop", help="sandbox image (default desktop)")
    parser.add_argument("--cache", default=None, help="folder with downloaded task files")
    parser.add_argument(
        "--parallel", type=int, default=1, help="tasks run at the same time (default 1)"
    )
    parser.add_argument(
        "--agents",
        default=",".join(ADVERSARIES),
        help=f"comma-separated agents to play (default all: {','.join(ADVERSARIES)}); the "
        "do-nothing agent always runs as the baseline",
    )
    parser.add_argument("--json", action="store_true", help="print every row, not just the gamed")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.parallel <= MAX_PARALLEL:
        raise StateActError(f"--parallel must be between 1 and {MAX_PARALLEL}.")
    if args.cache and not Path(args.cache).is_dir():
        raise StateActError(f"--cache {args.cache} is not a folder")
    for path in args.paths:
        if not Path(path).exists():
            raise StateActError(f"{path} is neither a task file nor a folder.")
    config = RunConfig(model="script/audit", cache_dir=args.cache)
    config.sandbox.image = args.image
    agents = [name.strip() for name in args.agents.split(",") if name.strip()]

    def show(row) -> None:
        if row.gamed or args.json:
            print(json.dumps(asdict(row)), flush=True)

    report = run_audit(
        args.paths, config, args.out, agents=agents, parallel=args.parallel, on_row=show
    )
    print(report.table())
    return 1 if report.errors else 0
