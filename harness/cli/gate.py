"""`stateact gate`: the finish gate on a laid-out state, printed as a verdict."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gates.laid_out import files_under, gate_laid_out
from harness.kernel.core import StateActError
from harness.models import make_model
from harness.run.config import RunConfig
from sandboxes.base import SandboxConfig
from tasks.schema import load_task


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gate",
        help="run the finish gate on files laid over a fresh sandbox",
        description=(
            "Run TASK.json's setup in a fresh sandbox, lay the files under --root over the "
            "machine's / as the agent's work (ROOT/home/user/x becomes /home/user/x, counted as "
            "changed during the run), optionally run --then as the sandbox's user, then run the "
            "finish gate exactly as at the end of a run. Prints the verdict as JSON: passed, and "
            "each gap with the layer that decided it (structural, probe, model, error). Exit 0 "
            "whenever a verdict was reached (passed or not), 2 on bad input."
        ),
    )
    parser.add_argument("task", metavar="TASK.json", help="the task file")
    parser.add_argument("--root", required=True, help="folder whose files are the agent's work")
    parser.add_argument(
        "--then",
        metavar="CMD",
        default=None,
        help="bash command run as the sandbox's user after the layout (a failure is reported)",
    )
    parser.add_argument(
        "--gate-model",
        metavar="SPEC|none",
        default="none",
        help="PROVIDER/NAME of the gate model; `none` (default) runs only the model-free layers",
    )
    parser.add_argument("--image", default=None, help="sandbox image (default: stateact-desktop)")
    parser.add_argument("--cache", default=None, help="OSWorld-style cache dir of the task's files")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object with the layers' evidence (findings, changed files, probes)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Prints the verdict (0); bad input raises StateActError, which `main` turns into exit 2."""
    result = gate(args)
    print(json.dumps(result.to_json(evidence=args.json), indent=None if args.json else 2))
    if result.then is not None and result.then.failed:
        print(
            f"stateact: note: --then exited with {result.then.exit_code}; the gate judged the "
            "state it left",
            file=sys.stderr,
        )
    return 0


def gate(args: argparse.Namespace):
    # Imported here so that `stateact --help` stays fast.

    task = load_task(args.task)
    root = Path(args.root)
    files_under(root)  # refuses a missing folder or a link before anything starts
    cache = Path(args.cache) if args.cache else None
    if cache is not None and not cache.is_dir():
        raise StateActError(f"--cache {cache} is not a folder")
    config = RunConfig(model="none")
    model = None if args.gate_model == "none" else make_model(args.gate_model, config.model_options)
    sandbox = SandboxConfig(image=args.image) if args.image else SandboxConfig()
    return gate_laid_out(
        task,
        root,
        model,
        sandbox,
        then=args.then,
        cache_dir=cache,
        max_turns=config.gate.max_turns,
    )
