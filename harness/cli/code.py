"""`stateact code --repo PATH "instruction" --model M`: change a repository in a sandbox, get a
patch."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness.apps.coding import CodeOptions, run_code, sandbox_name, summary_json
from harness.kernel.core import StateActError
from harness.kernel.display import visible
from harness.models import make_model

from .progress import TurnProgress
from .run import add_run_options, build_config


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "code",
        help="run a coding instruction on a copy of a repository and get a gate-checked patch",
        description="Copy the repository into a sandbox, let the agent carry out the instruction "
        "under the finish gate (which reads the repository and runs its tests), and write the "
        "change as a patch plus summary.json to the run directory. The repository is left "
        "untouched unless --apply is given. Exit 0 only when the gate passed, 1 otherwise, 2 on "
        "bad input.",
    )
    parser.add_argument("instruction", help="what to change, in plain words")
    parser.add_argument("--repo", required=True, help="the repository folder on this machine")
    add_run_options(parser)
    for action in parser._actions:  # a coding task needs no desktop
        if action.dest == "image":
            action.default, action.help = "base", "sandbox image (default base)"
    parser.add_argument("--apply", action="store_true", help="write the change into the repository")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    parser.add_argument("--out", help="run directory (default runs/code-<repo>-<time>)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    repo = Path(args.repo).expanduser()
    if not repo.is_dir():
        raise StateActError(f"the repository path {repo} does not exist or is not a folder.")
    config = build_config(args)
    model = make_model(config.model, config.model_options)  # fail fast on a bad spec or missing key
    out = Path(
        args.out or Path("runs") / f"code-{sandbox_name(repo)}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    if out.exists() and any(out.iterdir()):
        raise StateActError(f"the run directory {out} is not empty; choose another --out.")
    with TurnProgress(f"code {repo.name}") as progress:
        options = CodeOptions(apply=args.apply, model=model, on_turn=progress.update)
        summary = run_code(repo, args.instruction, config, out, options)
    if args.json:
        print(summary_json(summary))
    else:
        changed = len(summary.added) + len(summary.modified) + len(summary.deleted)
        verdict = "gate passed" if summary.gate_passed else "gate did NOT pass"
        print(
            f"{summary.status}, {verdict}; {changed} file(s) changed; patch: "
            f"{summary.patch or '(none)'}"
        )
        if summary.applied:
            print(f"applied to {summary.repo}")
    if summary.error:
        print(f"stateact: {summary.status}: {visible(summary.error)}", file=sys.stderr)
    print(f"run directory: {out}", file=sys.stderr)
    return (
        0
        if summary.gate_passed and (summary.applied or not args.apply or summary.patch is None)
        else 1
    )
