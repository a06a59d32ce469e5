"""`stateact check`: score a task's evaluator against a folder holding the machine's files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.kernel.core import StateActError
from tasks.evaluate import evaluate
from tasks.getters import RootDirSource
from tasks.schema import load_task
from tasks.support import check_references

from .run import add_host_paths_option


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="score a task's evaluator against files under a folder",
        description=(
            "Score TASK.json's evaluator against the files under --root (the sandbox path "
            "/home/user/x is read from ROOT/home/user/x) and print JSON with the score and each "
            "metric's value. Exit 0 when it scored (even 0.0), 2 on bad input."
        ),
    )
    parser.add_argument("task", metavar="TASK.json", help="the task file")
    parser.add_argument("--root", required=True, help="folder standing for the machine's /")
    parser.add_argument("--cache", default=None, help="OSWorld-style cache dir of the task's files")
    parser.add_argument("--work-dir", default=None, help="keep fetched files and outputs here")
    parser.add_argument(
        "--final-action",
        default=None,
        help="the agent's last action (FAIL declares the task infeasible)",
    )
    add_host_paths_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Score one task and print the result JSON (bad input raises StateActError: exit 2)."""
    print(json.dumps(check(args), indent=2))
    return 0


def check(args: argparse.Namespace) -> dict:
    task = load_task(args.task)
    task.allow_host_paths = bool(getattr(args, "allow_host_paths", False))
    root = Path(args.root)
    if not root.is_dir():
        raise StateActError(f"--root {root} is not a folder")
    cache = Path(args.cache) if getattr(args, "cache", None) else None
    if cache is not None and not cache.is_dir():
        raise StateActError(f"--cache {cache} is not a folder")
    check_references(task, cache)
    work_dir = Path(args.work_dir) if getattr(args, "work_dir", None) else None
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    result = evaluate(
        task,
        RootDirSource(root),
        cache_dir=cache,
        work_dir=work_dir,
        final_action=getattr(args, "final_action", None),
    )
    return {
        "task_id": task.id,
        "score": result.score,
        "metrics": [m.model_dump(exclude={"inputs"}) for m in result.metrics],  # the contract
        "error": result.error,
    }
