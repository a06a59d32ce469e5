"""The `stateact` command: one module per subcommand, each with `register(subparsers)` and `run(args)`."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from harness.core import StateActError

COMMANDS = ["run", "suite", "check", "gate", "batch", "code", "mcp", "report", "sandbox", "image"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stateact",
        description="StateAct: a code-first, state-grounded agent harness for computer-use tasks.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the harness does")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"harness.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        handler = (
            getattr(args, "handler", None)
            or importlib.import_module(f"harness.cli.{args.command}").run
        )
        return int(handler(args) or 0)
    except StateActError as exc:
        print(f"stateact: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stateact: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("STATEACT_DEBUG"):
            raise
        print(
            f"stateact: internal error: {type(exc).__name__}: {exc} "
            "(set STATEACT_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
