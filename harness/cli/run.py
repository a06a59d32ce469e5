"""`stateact run TASK.json --model M`: run one task and write its run directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.kernel.core import StateActError, require_one_of
from harness.kernel.display import visible
from harness.kernel.records import safe_run_name
from harness.models import endpoint_provider, make_model
from harness.run.config import CONTROL_MODES, PRESETS, RunConfig
from harness.runner import run_task
from sandboxes import BACKENDS
from sandboxes.base import HOST_NETWORK
from tasks.schema import load_task
from tasks.support import check_references

from .progress import TurnProgress

OK_STATUSES = ("completed", "infeasible")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one task",
        description="Run one task in a fresh sandbox and write config.json, trajectory.jsonl, gate/ "
        "and result.json to the run directory. Exit 0 when the agent finished (gate passed), 1 when "
        "the run ended otherwise (budget, gate rejections, errors), 2 on bad input.",
    )
    parser.add_argument("task", help="task JSON file (OSWorld format, or just id + instruction)")
    add_run_options(parser)
    parser.add_argument("--out", help="run directory (default runs/<task id>)")
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted run in --out"
    )
    parser.set_defaults(handler=run)


def add_run_options(parser) -> None:
    """Options shared by `run`, `suite`, `batch` and `code`."""
    parser.add_argument(
        "--model",
        required=True,
        help="PROVIDER/NAME: anthropic/…, openai/…, script/FILE, replay/RUN_DIR",
    )
    parser.add_argument(
        "--base-url", help="model API endpoint (else ANTHROPIC_BASE_URL / OPENAI_BASE_URL)"
    )
    parser.add_argument("--api-key", help="model API key (else ANTHROPIC_API_KEY / OPENAI_API_KEY)")
    parser.add_argument(
        "--context-window", type=int, help="override the model's context window (tokens)"
    )
    parser.add_argument("--gate-model", help="model spec for the finish gate (default: --model)")
    parser.add_argument(
        "--sandbox",
        default="docker",
        help=f"sandbox backend: {', '.join(BACKENDS)} (default docker)",
    )
    parser.add_argument("--image", default="desktop", help="sandbox image (default desktop)")
    parser.add_argument(
        "--preset", default="full", help=f"ablation preset: {', '.join(PRESETS)} (default full)"
    )
    parser.add_argument(
        "--max-turns", type=int, default=150, help="main-agent turn budget (default 150)"
    )
    parser.add_argument("--max-cost", type=float, help="stop when the run costs this many USD")
    parser.add_argument("--max-time", type=float, help="stop after this many seconds")
    parser.add_argument("--cache", help="folder with downloaded task files (OSWorld cache naming)")
    parser.add_argument(
        "--network",
        action="store_true",
        help="give each task's sandbox a network (off by default; docs/network.md)",
    )
    parser.add_argument(
        "--network-mode",
        default=HOST_NETWORK,
        help="with --network: `host` (default; shares the host's network, one task at a time) "
        "or the name of a Docker bridge network",
    )
    parser.add_argument(
        "--control",
        default="stateact",
        help=f"control mode: {', '.join(CONTROL_MODES)} (default stateact)",
    )
    add_host_paths_option(parser)
    parser.add_argument(
        "--task-state",
        action="store_true",
        help="keep a verifier-committed task state with milestone snapshots",
    )


def add_host_paths_option(parser) -> None:
    parser.add_argument(
        "--allow-host-paths",
        action="store_true",
        help="let task files name host files outside the task's folder and the cache",
    )


def build_config(args) -> RunConfig:
    """A RunConfig from the shared command-line options, with bad values named in one sentence."""
    require_one_of("sandbox backend", args.sandbox, BACKENDS)
    require_one_of("preset", args.preset, PRESETS)
    require_one_of("control mode", getattr(args, "control", "stateact"), CONTROL_MODES)
    if args.max_turns < 1:
        raise StateActError("--max-turns must be at least 1.")
    config = RunConfig(
        model=args.model,
        preset=args.preset,
        cache_dir=args.cache,
        control=getattr(args, "control", "stateact"),
        allow_host_paths=bool(getattr(args, "allow_host_paths", False)),
    )
    config.task_state.enabled = bool(getattr(args, "task_state", False))
    config.model_options.base_url = args.base_url
    config.model_options.api_key = args.api_key
    config.model_options.provider = endpoint_provider(args.model)
    config.model_options.context_window = args.context_window
    config.gate.model = args.gate_model
    config.sandbox.backend = args.sandbox
    config.sandbox.image = args.image
    config.sandbox.network = bool(getattr(args, "network", False))
    config.sandbox.network_mode = getattr(args, "network_mode", HOST_NETWORK)
    config.loop.max_turns = args.max_turns
    config.loop.max_cost_usd = args.max_cost
    config.loop.max_wall_s = args.max_time
    return config


def run(args) -> int:
    task = load_task(args.task)
    config = build_config(args)
    task.allow_host_paths = config.allow_host_paths
    check_references(task, Path(config.cache_dir) if config.cache_dir else None)
    model = make_model(config.model, config.model_options)  # fail fast on a bad spec or missing key
    out = Path(args.out or Path("runs") / safe_run_name(task.id))
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise StateActError(
            f"the run directory {out} is not empty; pass --resume to continue it or choose another --out."
        )
    with TurnProgress(task.id) as progress:
        result = run_task(
            task, config, out, resume=args.resume, model=model, on_turn=progress.update
        )
    print(
        json.dumps(
            {
                k: result[k]
                for k in ("task_id", "status", "score", "cost_usd", "main_turns", "gate_rounds")
            }
        )
    )
    if result.get("error"):
        print(f"stateact: {result['status']}: {visible(result['error'])}", file=sys.stderr)
    print(f"run directory: {out}", file=sys.stderr)
    return 0 if result["status"] in OK_STATUSES else 1
