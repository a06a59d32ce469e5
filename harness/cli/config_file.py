"""`--config FILE` and `-c key=value`: a run config's keys become the command's defaults, so the
options given on the command line still win (see `harness.apps.run_options`)."""

from __future__ import annotations

import argparse

from harness.apps.run_options import MODELS, read_run_config


def config_defaults(command: str, argv: list[str]) -> dict:
    """The validated run-config keys `argv` asks for (`--config`, `-c`), or {} without them."""
    if command not in MODELS:
        return {}
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    pre.add_argument("-c", dest="set", action="append")
    known, _rest = pre.parse_known_args(argv)
    if known.config is None and not known.set:
        return {}
    return read_run_config(command, known.config, known.set)


def apply_defaults(parser: argparse.ArgumentParser, command: str, values: dict) -> None:
    """Make `values` the defaults of `command`'s options; an option they give is no longer
    required on the command line."""
    if not values:
        return
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = subparsers.choices[command]
    for action in sub._actions:
        if action.dest in values:
            action.required = False
    sub.set_defaults(**values)


def apply_run_config(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> None:
    """What `harness.cli.main` calls for a command that takes a run config."""
    apply_defaults(parser, command, config_defaults(command, argv))
