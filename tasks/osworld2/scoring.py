"""OSWorld 2.0's verdict as StateAct records it, and what a dry run names as missing.

A task's `evaluate()` gives a float or a dict whose `score` counts; binary success is score == 1
(the full credit OSWorld 2.0's binary accuracy counts), partial success the score itself. Each
checkpoint the benchmark reports is kept. A judge call that failed or answered nothing makes the
evaluation an error: upstream metrics may turn it into a silent 0, which would read as the agent's
failure.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tasks.osworld2.bridge import Osworld2Config
from tasks.osworld2.services import service_blockers

TASK_GLOB = "task_*.py"
SERVICES_VARIABLE = "WEBSITE_HOST_SUFFIX"
"""Where OSWorld 2.0's website controller builds each mock site's host name from."""
NO_SERVICES = (
    f"the mock websites and GitLab are not running ({SERVICES_VARIABLE} is not set; give "
    "--osworld2-websites PATH, --osworld2-gitlab PATH or --osworld2-services FILE to start them, "
    "see docs/osworld2.md)"
)


class PhaseVerdict(BaseModel):
    """One phase's (or a one-phase task's) evaluation."""

    model_config = ConfigDict(extra="forbid")

    phase: int
    score: float = Field(ge=0.0, le=1.0)
    checkpoints: list[dict] = Field(default_factory=list)
    details: dict | None = None
    judges: list[dict] = Field(default_factory=list)
    """Every judge call of this evaluation: inputs, answer, error."""

    @property
    def judge_errors(self) -> list[str]:
        return [call["error"] for call in self.judges if call.get("error")]


def phase_verdict(phase: int, answer: dict) -> PhaseVerdict:
    """The bridge's `evaluate` answer as a verdict; a score outside [0, 1] is clamped as the
    benchmark's summary treats it."""
    details = answer.get("details") if isinstance(answer.get("details"), dict) else None
    checkpoints = details.get("checkpoints", []) if details else []
    score = min(1.0, max(0.0, float(answer["score"])))
    return PhaseVerdict(
        phase=phase,
        score=score,
        checkpoints=[c for c in checkpoints if isinstance(c, dict)],
        details=details,
        judges=list(answer.get("judges") or []),
    )


def task_score(verdicts: list[PhaseVerdict], phases: int | None = None) -> float:
    """A multiphase task's score: when every one of its `phases` was judged, the last phase's
    (each phase's evaluation covers the work so far); when the run stopped earlier, the phases'
    mean with each phase never reached counting 0, so a finished first phase is partial credit and
    never full. A task with no verdict is 0."""
    if not verdicts:
        return 0.0
    total = max(phases or len(verdicts), len(verdicts))
    if len(verdicts) == total:
        return verdicts[-1].score
    return sum(verdict.score for verdict in verdicts) / total


def result_fields(verdicts: list[PhaseVerdict], phases: int | None = None) -> dict:
    """What `result.json` gains for an OSWorld 2.0 task of `phases` phases."""
    score = task_score(verdicts, phases)
    errors = [error for verdict in verdicts for error in verdict.judge_errors]
    return {
        "score": score,
        "success": score == 1.0,
        "partial_score": score,
        "phase_results": [verdict.model_dump() for verdict in verdicts],
        "evaluation_error": (
            f"a judge call failed, so the score is not the agent's: {errors[0]}" if errors else None
        ),
    }


def task_files(config: Osworld2Config) -> list[Path]:
    """The task modules of the downloaded data, sorted."""
    if config.data is None or not config.data.is_dir():
        return []
    return sorted(config.data.rglob(TASK_GLOB))


def blockers(config: Osworld2Config | None, judge_needed: bool = True) -> list[str]:
    """One sentence per missing piece, in the order a user would bring them."""
    if config is None:
        return [
            "no OSWorld-V2 checkout is given (--osworld2 PATH to your clone of "
            "xlang-ai/OSWorld-V2)",
            "no OSWorld 2.0 task data is given (--osworld2-data PATH to the downloaded "
            "xlangai/osworld_v2_tasks dataset)",
            NO_SERVICES,
            "no judge model is given (--judge-model PROVIDER/NAME)",
        ]
    found = []
    if not (config.checkout / "desktop_env" / "task_loader.py").is_file():
        found.append(
            f"{config.checkout} is not an OSWorld-V2 checkout (no desktop_env/task_loader.py)"
        )
    if not task_files(config):
        found.append(
            "no OSWorld 2.0 task data is given (--osworld2-data PATH to the downloaded "
            "xlangai/osworld_v2_tasks dataset)"
            if config.data is None
            else f"{config.data} holds no {TASK_GLOB} task modules"
        )
    if config.starts_services:
        found += service_blockers(config)
    elif not (config.host_suffix or os.environ.get(SERVICES_VARIABLE)):  # started by the user
        found.append(NO_SERVICES)
    if judge_needed and not config.judge_model:
        found.append("no judge model is given (--judge-model PROVIDER/NAME)")
    return found
