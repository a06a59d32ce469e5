"""`stateact run TASK.json --model M`: run one task and write its run directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.apps.oracle import NOTICE, is_oracle, oracle_gate_model, oracle_model
from harness.apps.osworld2_options import add_osworld2_options
from harness.apps.osworld2_run import is_task_module
from harness.apps.run_options import config_from_options, options_from_args, render_trajectory
from harness.apps.sandbox_options import add_sandbox_options
from harness.control import CONTROLLERS
from harness.control.lstc.gui import COORDINATE_SCALES
from harness.kernel.core import StateActError
from harness.kernel.display import visible
from harness.kernel.records import safe_run_name
from harness.models import make_model
from harness.models.pricing import check_cost_cap, unpriced_reason
from harness.run.config import GATE_MODES, PRESETS, RunConfig
from harness.runner import run_task
from sandboxes import BACKENDS
from sandboxes.base import HOST_NETWORK
from tasks.schema import load_task
from tasks.support import check_references

from .config_file import apply_run_config
from .osworld2_tasks import run_task_module
from .progress import TurnProgress
from .seed_options import add_seed_options

OK_STATUSES = ("completed", "infeasible")


__all__ = ["apply_run_config", "register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run one task",
        description="Run one task in a fresh sandbox and write config.json, trajectory.jsonl, "
        "gate/ and result.json to the run directory. Exit 0 when the agent finished (gate passed), "
        "1 when the run ended otherwise (budget, gate rejections, errors), 2 on bad input.",
    )
    parser.add_argument(
        "task",
        help="task JSON file (OSWorld format, or just id + instruction), or an OSWorld 2.0 task "
        "module task_<id>.py with --osworld2",
    )
    add_run_options(parser)
    add_selection_options(parser)
    add_osworld2_options(parser)
    add_config_options(parser)
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
    parser.add_argument(
        "--image", default=None, help="sandbox image (default desktop; osworld2 with --osworld2)"
    )
    parser.add_argument(
        "--preset", default="full", help=f"ablation preset: {', '.join(PRESETS)} (default full)"
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help="main-agent turn budget (default 150; 500 with --osworld2)",
    )
    parser.add_argument(
        "--max-cost",
        type=float,
        help="stop when the run costs this many USD (refused for a model without a known price)",
    )
    parser.add_argument(
        "--price-in",
        type=float,
        metavar="USD",
        help="input price in USD per million tokens (default: the genai-prices table)",
    )
    parser.add_argument(
        "--price-out",
        type=float,
        metavar="USD",
        help="output price in USD per million tokens (default: the genai-prices table)",
    )
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
    add_sandbox_options(parser)
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
    add_experiment_options(parser)


def add_experiment_options(parser) -> None:
    """The options of the paper's comparison: the baseline, the paper's gate, the display."""
    parser.add_argument(
        "--gate-mode",
        choices=list(GATE_MODES),
        default="layered",
        help="layered (default: structural checks and probes, then a model on a snapshot) or "
        "paper (one model check on the live machine; structural checks only annotate the round)",
    )
    parser.add_argument(
        "--keep-screenshots",
        type=int,
        default=3,
        help="--control screenshot: screenshots kept in the history (default 3, as Anthropic's "
        "reference loop; 0 keeps all)",
    )
    parser.add_argument(
        "--screenshot-gate",
        action="store_true",
        help="--control screenshot: run the finish gate on finish (the baseline has none)",
    )
    parser.add_argument(
        "--main-display",
        action="store_true",
        help="stateact mode: give the main agent's bash and Python the X display and session bus "
        "(default: only the GUI specialist has the screen)",
    )


def add_config_options(parser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="a YAML or TOML run config whose keys are this command's long options "
        "(max_turns: 60); flags given here override it",
    )
    parser.add_argument(
        "-c",
        dest="set",
        action="append",
        metavar="KEY=VALUE",
        help="set one run-config key (repeatable; -c max_turns=60), over --config",
    )


def add_selection_options(parser) -> None:
    """Options of `run` and `suite`: best-of-N rollouts, the lesson memory, WebArena's sites."""
    parser.add_argument(
        "--sites",
        metavar="FILE",
        help="WebArena: YAML or JSON mapping each site (shopping, reddit, gitlab, ...) to its base "
        "URL, with optional accounts and reset_command (docs/webarena.md)",
    )
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
    """A RunConfig from the shared command-line options, validated by the same model as a run
    config file and the Python API (`harness.apps.run_options`)."""
    return config_from_options(options_from_args(args))


def run(args) -> int:
    if is_task_module(Path(args.task)):  # OSWorld 2.0's: through the benchmark's own code
        return run_task_module(args, build_config(args))
    task = load_task(args.task)
    config = build_config(args)
    task.allow_host_paths = config.allow_host_paths
    check_references(task, Path(config.cache_dir) if config.cache_dir else None)
    gate_model = None
    if is_oracle(config.model):  # the task's reference solution, as `suite` plays it
        model, gate_model = oracle_model(task), oracle_gate_model(task)
        print(NOTICE, file=sys.stderr)
    else:
        model = make_model(config.model, config.model_options)  # a bad spec or key fails now
        check_cost_cap(model, config.model, config.loop.max_cost_usd)
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
            task,
            config,
            out,
            resume=args.resume,
            model=model,
            gate_model=gate_model,
            on_turn=progress.update,
        )
    render_trajectory(out)
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
    if result.get("cost_usd") is None:
        print(f"stateact: cost unknown: {unpriced_reason(config.model)}", file=sys.stderr)
    print(f"run directory: {out} (trajectory: {out / 'trajectory.html'})", file=sys.stderr)
    return 0 if result["status"] in OK_STATUSES else 1
