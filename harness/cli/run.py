"""`stateact run TASK.json --model M`: run one task and write its run directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.control import CONTROLLERS
from harness.control.lstc.gui import COORDINATE_SCALES, grounder_options
from harness.control.memory import LessonStore
from harness.kernel.core import StateActError, require_one_of
from harness.kernel.display import visible
from harness.kernel.records import safe_run_name
from harness.models import endpoint_provider, make_model
from harness.run.config import MAX_BEST_OF, PRESETS, RunConfig
from harness.runner import run_task
from sandboxes import BACKENDS
from sandboxes.base import HOST_NETWORK
from tasks.schema import load_task
from tasks.support import check_references

from .progress import TurnProgress
from .seed_options import add_seed_options, apply_seed_options

OK_STATUSES = ("completed", "infeasible")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one task",
        description="Run one task in a fresh sandbox and write config.json, trajectory.jsonl, "
        "gate/ and result.json to the run directory. Exit 0 when the agent finished (gate passed), "
        "1 when the run ended otherwise (budget, gate rejections, errors), 2 on bad input.",
    )
    parser.add_argument("task", help="task JSON file (OSWorld format, or just id + instruction)")
    add_run_options(parser)
    add_selection_options(parser)
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
        help=f"control mode: {', '.join(tuple(CONTROLLERS))} (default stateact)",
    )
    parser.add_argument(
        "--grounder",
        help="lstc: the GUI channel's visual grounder, an OpenAI-compatible vision model "
        "openai/NAME",
    )
    parser.add_argument(
        "--grounder-base-url", help="the grounder's endpoint (default: the main model's)"
    )
    parser.add_argument(
        "--grounder-coordinates",
        choices=list(COORDINATE_SCALES),
        default=None,
        help="what the grounder's answers measure: screenshot pixels (GTA1, Qwen2.5-VL; default), "
        "a 0-1000 grid (UI-TARS) or fractions 0-1",
    )
    add_host_paths_option(parser)
    parser.add_argument(
        "--task-state",
        action="store_true",
        help="keep a verifier-committed task state with milestone snapshots; finish is refused "
        "while a requirement's stored probe says it does not hold",
    )
    parser.add_argument(
        "--thinking",
        default="off",
        help="Anthropic thinking: adaptive, off or a token budget N >= 1024 (default off)",
    )
    parser.add_argument(
        "--worker-depth",
        type=int,
        default=1,
        help="1 = flat delegation (default); 2 lets a worker delegate to a worker (depth ablation)",
    )
    parser.add_argument(
        "--nested-gate",
        action="store_true",
        help="give workers a finish gate of their own (the nested ablation)",
    )
    add_seed_options(parser)


def add_selection_options(parser) -> None:
    """Options of `run` and `suite`: best-of-N rollouts and the lesson memory."""
    parser.add_argument(
        "--best-of",
        type=int,
        default=1,
        help="N rollouts from the same post-setup snapshot in parallel sandboxes; the gate's "
        "verdict, verified requirements and cost pick one, which alone is scored (default 1)",
    )
    parser.add_argument(
        "--memory",
        metavar="DIR",
        help="lesson store: the run starts with its most relevant lessons and adds its own",
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
    require_one_of("control mode", getattr(args, "control", "stateact"), tuple(CONTROLLERS))
    if args.max_turns < 1:
        raise StateActError("--max-turns must be at least 1.")
    if getattr(args, "worker_depth", 1) not in (1, 2):
        raise StateActError("--worker-depth must be 1 or 2.")
    best_of = getattr(args, "best_of", 1)
    if not 1 <= best_of <= MAX_BEST_OF:
        raise StateActError(f"--best-of must be between 1 and {MAX_BEST_OF}.")
    config = RunConfig(
        model=args.model,
        preset=args.preset,
        cache_dir=args.cache,
        control=getattr(args, "control", "stateact"),
        allow_host_paths=bool(getattr(args, "allow_host_paths", False)),
    )
    config.task_state.enabled = bool(getattr(args, "task_state", False))
    config.best_of = best_of
    config.memory_dir = _memory_dir(getattr(args, "memory", None))
    config.subagents.worker_depth = getattr(args, "worker_depth", 1)
    config.subagents.nested_gate = bool(getattr(args, "nested_gate", False))
    config.model_options.base_url = args.base_url
    config.model_options.api_key = args.api_key
    config.model_options.provider = endpoint_provider(args.model)
    config.model_options.context_window = args.context_window
    config.model_options = config.model_options.with_thinking(getattr(args, "thinking", "off"))
    config.gate.model = args.gate_model
    apply_seed_options(args, config)
    config.sandbox.backend = args.sandbox
    config.sandbox.image = args.image
    config.sandbox.network = bool(getattr(args, "network", False))
    config.sandbox.network_mode = getattr(args, "network_mode", HOST_NETWORK)
    config.loop.max_turns = args.max_turns
    config.loop.max_cost_usd = args.max_cost
    config.loop.max_wall_s = args.max_time
    grounder = getattr(args, "grounder", None)
    if grounder:
        if config.control != "lstc":
            raise StateActError(
                "--grounder gives the lstc mode its GUI channel; add --control lstc."
            )
        # fails fast on a bad spec or a missing key, as the main model does
        make_model(
            grounder, grounder_options(grounder, config.model_options, args.grounder_base_url)
        )
        config.lstc.grounder = grounder
        config.lstc.grounder_base_url = args.grounder_base_url
        config.lstc.grounder_coordinates = getattr(args, "grounder_coordinates", None) or "pixels"
    elif getattr(args, "grounder_base_url", None) or getattr(args, "grounder_coordinates", None):
        raise StateActError("--grounder-base-url and --grounder-coordinates need --grounder.")
    return config


def _memory_dir(value: str | None) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise StateActError(f"--memory {value} is not a folder.")
    LessonStore(path).close()  # a store that cannot be opened fails now, not after the run
    return str(path.resolve())


def run(args) -> int:
    task = load_task(args.task)
    config = build_config(args)
    task.allow_host_paths = config.allow_host_paths
    check_references(task, Path(config.cache_dir) if config.cache_dir else None)
    model = make_model(config.model, config.model_options)  # fail fast on a bad spec or missing key
    if config.best_of > 1:
        if args.resume:
            raise StateActError("--resume does not continue a --best-of run; start it again.")
        model = None  # each rollout builds its own client (a scripted model has a position)
    out = Path(args.out or Path("runs") / safe_run_name(task.id))
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise StateActError(
            f"the run directory {out} is not empty; pass --resume to continue it or "
            "choose another --out."
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
