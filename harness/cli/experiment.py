"""`stateact experiment FILE.yaml --out DIR` | `stateact experiment --table DIR`: run the arms of an
experiment as suites and write its tables, or rebuild the tables from what DIR holds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.apps.experiment import (
    Arm,
    ArmSpec,
    load_experiment,
    run_experiment,
    select_tasks,
    write_tables,
)
from harness.apps.oracle import is_oracle
from harness.kernel.core import StateActError
from harness.models import make_model

from .run import add_run_options, add_selection_options, build_config


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="run an experiment's arms as suites and write its tables",
        description="Run every arm of FILE.yaml (tasks, select, trials, parallel, arms: a name, a "
        "model and run options by their CLI names) as a suite into DIR/<arm>/trial-<k>/, keeping "
        "finished runs, then write DIR/table.json, table.md and table.html: per arm and per "
        "domain binary and partial success, cost, tokens, turns, time, GUI use and the gate's "
        "false passes and rejections, and each pair of arms with paired bootstrap 95%% intervals. "
        "Exit 0 when every task reached a verdict, 1 when any ended in an error, 2 on bad input.",
    )
    parser.add_argument("file", nargs="?", help="the experiment file (YAML)")
    parser.add_argument("--out", help="experiment folder (default runs/<file name>)")
    parser.add_argument(
        "--retry-errors",
        action="store_true",
        help="run again the tasks whose last run ended in an error (their rows stay as history)",
    )
    parser.add_argument(
        "--table", metavar="DIR", help="only rebuild DIR's tables from the results it holds"
    )
    parser.set_defaults(handler=run)


class _ArmParser(argparse.ArgumentParser):
    """The run options' parser, raising instead of exiting, for one arm's options."""

    def __init__(self, arm: str):
        super().__init__(prog=f"arm {arm}", add_help=False)
        self.arm = arm

    def error(self, message: str):
        raise StateActError(f"arm {self.arm!r}: {message}.")


def arm_argv(spec: ArmSpec, base_dir: Path) -> list[str]:
    """The arm's options as the command line would give them."""
    model = spec.model
    if model.startswith("script/") and not is_oracle(model):
        script = Path(model.removeprefix("script/"))
        if not script.is_absolute() and (base_dir / script).exists():
            model = f"script/{base_dir / script}"
    argv = ["--model", model]
    for key, value in spec.options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (dict, list)):
            raise StateActError(f"arm {spec.name!r}: option {key} takes one value, not {value!r}.")
        else:
            argv += [flag, str(value)]
    return argv


def build_arm(spec: ArmSpec, base_dir: Path) -> Arm:
    parser = _ArmParser(spec.name)
    add_run_options(parser)
    add_selection_options(parser)
    args = parser.parse_args(arm_argv(spec, base_dir))
    config = build_config(args)
    if not is_oracle(config.model):
        make_model(config.model, config.model_options)  # a bad spec or missing key fails now
    return Arm(spec, config)


def run(args) -> int:
    if args.table:
        if args.file or args.out:
            raise StateActError("--table DIR rebuilds the tables alone; give no FILE or --out.")
        write_tables(args.table)
        print(f"tables: {Path(args.table) / 'table.md'}", file=sys.stderr)
        return 0
    if not args.file:
        raise StateActError("give the experiment file (FILE.yaml), or --table DIR.")
    path = Path(args.file)
    spec = load_experiment(path)
    arms = [build_arm(arm, path.parent) for arm in spec.arms]
    task_paths = select_tasks(spec, path.parent)
    out = Path(args.out or Path("runs") / path.stem)

    def heard(arm: str, line: dict) -> None:
        print(f"{arm}: {line['task_id']} {line['status']} score {line['score']}", file=sys.stderr)

    table = run_experiment(
        spec, arms, task_paths, out, on_result=heard, retry_errors=args.retry_errors
    )
    for row in table["arms"]:
        print(
            f"{row['name']}: {row['runs']} runs · binary {row['binary_success']} · partial "
            f"{row['partial_success']} · ${row['cost_per_task']} per task"
        )
    print(f"tables: {out / 'table.md'}", file=sys.stderr)
    errors = sum(row["errors"] for row in table["arms"])
    return 1 if errors else 0
