"""The OSWorld 2.0 options of `run` and `suite` (`--osworld2`, `--osworld2-data`,
`--osworld2-python`, `--judge-model`, `--user-model`) as the run config's `osworld2` key.

Nothing is checked for presence here: a missing checkout or data folder is a blocker the dry run
names and a run reports in one sentence; only values that can never work (a model spec of the
wrong shape, a judge or data folder without a checkout) are refused at once.
"""

from __future__ import annotations

from pathlib import Path

from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from tasks.osworld2.bridge import Osworld2Config, model_variables

SERVICE_OPTIONS = ("websites", "gitlab", "services", "host_suffix", "build_network")
BUILD_NETWORKS = ("none", "host")
CHECKPOINT_MODES = ("off", "inline")
INLINE_STEPS = (150, 300)
"""Where OSWorld 2.0's official Claude launcher evaluates mid-run (docs/osworld2.md)."""
OSWORLD2_IMAGE = "osworld2"
"""The image OSWorld 2.0 runs take when no --image is given: the guest's applications."""
DEFAULT_IMAGE = "desktop"
OSWORLD2_MAX_TURNS = 500
"""OSWorld 2.0's headline step budget (the paper's and the E2B port's 500)."""
DEFAULT_MAX_TURNS = 150


def osworld2_config(options) -> Osworld2Config | None:
    """The `osworld2` key the options describe; None without `--osworld2`."""
    checkout = getattr(options, "osworld2", None)
    judge, user = getattr(options, "judge_model", None), getattr(options, "user_model", None)
    data = getattr(options, "osworld2_data", None)
    python = getattr(options, "osworld2_python", None)
    services = {key: getattr(options, f"osworld2_{key}", None) for key in SERVICE_OPTIONS}
    mode = getattr(options, "checkpoint_eval_mode", None) or "off"
    steps = getattr(options, "checkpoint_steps", None)
    if checkout is None:
        webarena = getattr(options, "sites", None) is not None  # its judge judges fuzzy_match
        own = (user, data, python, *services.values(), steps, mode != "off")
        if (judge and not webarena) or any(own):
            raise StateActError(
                "--osworld2-data, --osworld2-python, --osworld2-websites, --osworld2-gitlab, "
                "--osworld2-services, --osworld2-build-network, --checkpoint-eval-mode, "
                "--judge-model and --user-model go "
                "with --osworld2 PATH (your OSWorld-V2 checkout); --judge-model also with --sites "
                "(WebArena)."
            )
        return None
    for prefix, spec in (("OSWORLD_EVAL_MODEL", judge), ("OSWORLD_USER_SIM", user)):
        if spec:
            model_variables(prefix, spec, None)  # a spec of the wrong shape fails now
    build_network = services["build_network"] or "none"
    if build_network not in BUILD_NETWORKS:
        raise StateActError(f"--osworld2-build-network must be one of {', '.join(BUILD_NETWORKS)}.")
    paths = {
        f"{key}_file" if key == "services" else key: _path(services[key])
        for key in ("websites", "gitlab", "services")
    }
    return Osworld2Config(
        checkout=Path(checkout).expanduser().resolve(),
        data=_path(data),
        python=Path(python).expanduser() if python else None,
        judge_model=judge,
        user_model=user,
        host_suffix=services["host_suffix"],
        build_network=build_network,
        **paths,
        **checkpoint_options(mode, steps),
    )


def _path(raw: str | None) -> Path | None:
    return Path(raw).expanduser().resolve() if raw else None


def checkpoint_options(mode: str, steps: str | None) -> dict:
    """`--checkpoint-eval-mode` and `--checkpoint-steps` as the config's fields; `inline`
    without steps takes the official launcher's 150 and 300."""
    if mode not in CHECKPOINT_MODES:
        raise StateActError(f"--checkpoint-eval-mode must be one of {', '.join(CHECKPOINT_MODES)}.")
    if steps is not None and mode != "inline":
        raise StateActError("--checkpoint-steps goes with --checkpoint-eval-mode inline.")
    if mode != "inline":
        return {"checkpoint_eval_mode": mode}
    try:
        numbers = [int(part) for part in steps.split(",")] if steps else list(INLINE_STEPS)
    except ValueError:
        raise StateActError("--checkpoint-steps must be turn numbers, like 150,300.") from None
    if any(n < 1 for n in numbers):
        raise StateActError("--checkpoint-steps must be turn numbers of at least 1.")
    return {"checkpoint_eval_mode": mode, "checkpoint_steps": sorted(set(numbers))}


def sandbox_image(options) -> str:
    """The image the options ask for: `--image`, else `osworld2` with --osworld2, else
    `desktop`."""
    image = getattr(options, "image", None)
    if image:
        return image
    return OSWORLD2_IMAGE if getattr(options, "osworld2", None) else DEFAULT_IMAGE


def apply_osworld2(config: RunConfig, options) -> None:
    """Set `config.osworld2` and the step budget: 500 turns for OSWorld 2.0 unless one is given."""
    config.osworld2 = osworld2_config(options)
    turns = getattr(options, "max_turns", None)
    if turns is not None and turns < 1:
        raise StateActError("--max-turns must be at least 1.")
    default = OSWORLD2_MAX_TURNS if config.osworld2 is not None else DEFAULT_MAX_TURNS
    config.loop.max_turns = turns if turns is not None else default


def add_osworld2_options(parser) -> None:
    """The command-line flags (`run` and `suite`)."""
    parser.add_argument(
        "--osworld2",
        metavar="PATH",
        help="run OSWorld 2.0 task modules through your clone of xlang-ai/OSWorld-V2 at PATH "
        "(its loader, setup controller and evaluators; docs/osworld2.md)",
    )
    parser.add_argument(
        "--osworld2-data",
        metavar="PATH",
        help="with --osworld2: the downloaded xlangai/osworld_v2_tasks data (task_*.py); `suite` "
        "runs every task module in it when no PATH is given",
    )
    parser.add_argument(
        "--osworld2-python",
        metavar="FILE",
        help="with --osworld2: the interpreter the checkout is installed in (default "
        "PATH/.venv/bin/python)",
    )
    parser.add_argument(
        "--osworld2-websites",
        metavar="PATH",
        help="with --osworld2: your checkout of the mock websites (Task-Web/OSWorld-web): its "
        "docker-compose.yml (or else its Dockerfile) built and started for the run or suite, each "
        "site under its host name behind StateAct's front proxy",
    )
    parser.add_argument(
        "--osworld2-gitlab",
        metavar="PATH",
        help="with --osworld2: your checkout of Task-Web/gitlab, built and started as "
        "gitlab.<suffix>",
    )
    parser.add_argument(
        "--osworld2-services",
        metavar="FILE",
        help="with --osworld2: a JSON file of services to build and start (docs/osworld2.md)",
    )
    parser.add_argument(
        "--osworld2-build-network",
        choices=BUILD_NETWORKS,
        help="with --osworld2: the network the builds from the websites' and GitLab's checkouts "
        "run with (default none; host lets their Dockerfiles fetch packages)",
    )
    parser.add_argument(
        "--osworld2-host-suffix",
        metavar="SUFFIX",
        help="with --osworld2: WEBSITE_HOST_SUFFIX for the benchmark (the services StateAct "
        "starts answer under it; default the services file's, else osworld2.test)",
    )
    parser.add_argument(
        "--checkpoint-eval-mode",
        choices=CHECKPOINT_MODES,
        default="off",
        help="with --osworld2: inline also runs the benchmark's evaluation mid-phase at "
        "--checkpoint-steps (recorded; the phase's score stays its final evaluation)",
    )
    parser.add_argument(
        "--checkpoint-steps",
        metavar="N,M",
        help="with --checkpoint-eval-mode inline: main-agent turns to evaluate after "
        "(default 150,300, as the benchmark's launcher)",
    )
    parser.add_argument(
        "--judge-model",
        metavar="PROVIDER/NAME",
        help="with --osworld2: the model of the benchmark's LLM/VLM judges (anthropic/… or "
        "openai/…, mapped onto OSWORLD_EVAL_MODEL_*; the key stays in its provider's variable); "
        "with --sites: the model judging WebArena's fuzzy_match answers with WebArena's prompt",
    )
    parser.add_argument(
        "--user-model",
        metavar="PROVIDER/NAME",
        help="with --osworld2: the model of the simulated user ask_user reaches "
        "(OSWORLD_USER_SIM_*; default the judge's)",
    )
