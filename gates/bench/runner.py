"""Run the gate benchmark: every case through the gate's layers, sharing one sandbox.

Cases live in folders of their own (/home/user/<id>/), so they share a sandbox without touching
each other. Each case is laid out and observed in the live sandbox in turn, exactly as the gate
observes at the end of a run (files changed since the case's own start, what the open office says);
then one snapshot of the whole machine is judged case by case, as the gate judges its snapshot.
Office cases come last, so the office's scratch files never fall into another case's window.
"""

from __future__ import annotations

import base64
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.kernel.core import Model, StateActError
from sandboxes import open_sandbox
from sandboxes.toolbox.protocol import BashRun, FileWrite
from sandboxes.typed import run

from ..gate import Gate
from ..laid_out import ThenReport, run_then
from ..verdict import Verdict
from .cases import Case, build_cases

OLD_MTIME = "2020-01-01 00:00:00"


@dataclass
class CaseResult:
    """A case and the verdicts it got."""

    case: Case
    model_free: Verdict
    """The model-free layers alone (`--gate-model none`)."""
    with_model: Verdict | None = None
    """The whole gate with a model, when one was given."""
    then: ThenReport | None = None

    @property
    def caught(self) -> bool:
        return self.model_free.passed is not True

    @property
    def false_rejection(self) -> bool:
        return self.case.correct and self.caught


def _lay(sandbox, files: dict[str, bytes], old: bool = False) -> None:
    """Write the files through the toolbox, as an agent's code would (written now, so changed
    during the run); `old` backdates them to before any case started (the task's setup state)."""
    for path, data in files.items():
        run(sandbox, FileWrite(path, base64.b64encode(data).decode()))
    if old and files:
        quoted = " ".join(shlex.quote(path) for path in files)
        done = run(sandbox, BashRun(f"touch -d '{OLD_MTIME}' -- {quoted}"))
        if done.exit_code not in (0, None):
            raise StateActError(f"could not backdate the case files: {done.output}")


def prepare(sandbox, case: Case) -> tuple[Gate, dict, ThenReport | None]:
    """Lay one case out in the live sandbox and observe it as the gate would at the finish."""
    _lay(sandbox, case.before, old=True)
    started_at = time.time()
    gate = Gate(
        case.instruction,
        sandbox,
        None,
        started_at=started_at,
        initially_present=Gate.present(sandbox, case.instruction),
    )
    _lay(sandbox, case.after)
    then = run_then(sandbox, case.then) if case.then else None
    return gate, gate.observe(), then


def run_cases(
    sandbox_config,
    cases: list[Case] | None = None,
    model_for: Callable[[Case], Model] | None = None,
) -> list[CaseResult]:
    """Every case's model-free verdict and, with `model_for`, its verdict with that model."""

    cases = sorted(cases or build_cases(), key=lambda case: case.then is not None)
    prepared = []
    with open_sandbox(sandbox_config) as live:
        for case in cases:
            prepared.append((case, *prepare(live, case)))
        snapshot = live.snapshot()
        try:
            with open_sandbox(sandbox_config, snapshot) as view:
                return [_judge(view, item, model_for) for item in prepared]
        finally:
            live.discard_snapshot(snapshot)


def _judge(view, item, model_for) -> CaseResult:
    case, gate, observed, then = item
    result = CaseResult(case, gate.assess(view, observed), then=then)
    if model_for is not None:
        gate.model = model_for(case)
        result.with_model = gate.assess(view, observed, label=f"gate-{case.id}")
        gate.model = None
    return result
