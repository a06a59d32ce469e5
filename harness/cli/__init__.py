"""The `stateact` command: one module per subcommand, each with `register(subparsers)` and
`run(args)`.

Only the chosen subcommand's module is imported (with the application under it), so `stateact
--help` and every command start without loading the others' dependencies.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from harness.kernel.core import StateActError
from harness.kernel.display import visible

COMMANDS = {
    "run": "run one task",
    "suite": "run a suite of tasks (or list what would run with --dry-run)",
    "check": "score a task's evaluator against files under a folder",
    "gate": "run the finish gate on a laid-out state and print its verdict",
    "batch": "run one instruction over many files, each in its own sandbox and through the gate",
    "code": "run a coding instruction on a copy of a repository and get a gate-checked patch",
    "mcp": "run an MCP server (stdio) exposing sandboxes and the finish gate",
    "memory": "list, show or forget the lessons a --memory folder keeps",
    "report": "summarize a run directory or a suite directory",
    "view": "serve a suite's report and trajectories on 127.0.0.1, refreshing while it runs",
    "sandbox": "run a command or a shell in a fresh sandbox",
    "image": "build or list the sandbox images",
    "cache": "download the files tasks name into a cache folder",
    "experiment": "run an experiment's arms as suites and write its tables",
    "audit": "play built-in adversarial agents against a suite and report the tasks they game",
    "osworld2": "download OSWorld 2.0's gated task data with your own Hugging Face token",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s full options (every command's when None) and the others'
    names."""
    parser = argparse.ArgumentParser(
        prog="stateact",
        description="StateAct: a code-first, state-grounded agent harness for computer-use tasks.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the harness does")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(f"harness.cli.{name}").register(subparsers)
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return parser


def chosen_command(argv: list[str]) -> str:
    """The subcommand named on the command line ('' when none is): the first non-option word."""
    return next((word for word in argv if not word.startswith("-")), "")


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed command line, over the defaults a `--config` file and `-c` pairs give."""
    command = chosen_command(argv)
    parser = build_parser(command)
    # Commands that take a run config (`--config`, `-c`) say so with `apply_run_config`; only the
    # chosen command's module is loaded, so the others pay nothing for it.
    apply_run_config = getattr(sys.modules.get(f"harness.cli.{command}"), "apply_run_config", None)
    if apply_run_config is not None:
        apply_run_config(parser, command, argv)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse(argv)
    except StateActError as exc:
        print(f"stateact: error: {visible(exc)}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        handler = getattr(args, "handler", None) or sys.modules[f"harness.cli.{args.command}"].run
        return int(handler(args) or 0)
    except StateActError as exc:
        print(f"stateact: error: {visible(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stateact: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`stateact suite … --dry-run | head`): stop quietly, as Unix
        # filters do; stdout is pointed at /dev/null so the interpreter's final flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if os.environ.get("STATEACT_DEBUG"):
            raise
        if type(exc).__module__.startswith("docker."):  # the engine's answer is the sentence
            print(f"stateact: error: the Docker engine said: {visible(exc)}", file=sys.stderr)
            return 1
        print(
            f"stateact: internal error: {type(exc).__name__}: {visible(exc)} "
            "(set STATEACT_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
