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

OSWORLD2_MAX_TURNS = 500
"""OSWorld 2.0's headline step budget (the paper's and the E2B port's 500)."""
DEFAULT_MAX_TURNS = 150


def osworld2_config(options) -> Osworld2Config | None:
    """The `osworld2` key the options describe; None without `--osworld2`."""
    checkout = getattr(options, "osworld2", None)
    judge, user = getattr(options, "judge_model", None), getattr(options, "user_model", None)
    data = getattr(options, "osworld2_data", None)
    python = getattr(options, "osworld2_python", None)
    if checkout is None:
        webarena = getattr(options, "sites", None) is not None  # its judge judges fuzzy_match
        if (judge and not webarena) or user or data or python:
            raise StateActError(
                "--osworld2-data, --osworld2-python, --judge-model and --user-model go with "
                "--osworld2 PATH (your OSWorld-V2 checkout); --judge-model also with --sites "
                "(WebArena)."
            )
        return None
    for prefix, spec in (("OSWORLD_EVAL_MODEL", judge), ("OSWORLD_USER_SIM", user)):
        if spec:
            model_variables(prefix, spec, None)  # a spec of the wrong shape fails now
    return Osworld2Config(
        checkout=Path(checkout).expanduser().resolve(),
        data=Path(data).expanduser().resolve() if data else None,
        python=Path(python).expanduser() if python else None,
        judge_model=judge,
        user_model=user,
    )


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
