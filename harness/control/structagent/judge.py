"""Behavior Best-of-N for `--control structagent --best-of N` (StructAgent §5 and Appendix E.3).

Each finished rollout is rendered as a behaviour narrative: its subgoals with what the verifier
decided, its requirements with their final status and evidence, and its final structured state
(the stored probes run again on the rollout's own sandbox, the files it changed). One judge
request compares the candidates and names the most credible; it never sees a score (nothing is
scored before the choice). An unusable answer, a judge that cannot be called, or fewer than two
finished rollouts leave the fixed ranking's choice (`best_of.select_rollout`) in place.
"""

from __future__ import annotations

import json
import logging

from harness.control.task_state import TaskState
from harness.kernel.core import StateActError, ToolError
from harness.kernel.records import load_events
from harness.models import make_model
from sandboxes.toolbox.protocol import FsChanged
from sandboxes.typed import run

from ..jsonask import JsonAsker, prompt

log = logging.getLogger(__name__)

FINISHED = ("completed", "infeasible")
NARRATIVE_CHARS = 4000


def parse_pick(indexes: list[int]):
    def check(value) -> dict:
        if not isinstance(value, dict) or value.get("best") not in indexes:
            raise ValueError(f'expected {{"best": N, "reason": "..."}} with N one of {indexes}')
        return {"best": value["best"], "reason": str(value.get("reason", ""))[:500]}

    return check


def judge_choice(context, rollouts: list, sandboxes: list, dirs) -> tuple | None:
    """(chosen rollout, reasons) by the judge, or None to keep the fixed ranking."""
    config = context.config
    if config.control != "structagent" or not config.structagent.judge:
        return None
    finished = [r for r in rollouts if r.status in FINISHED]
    if len(finished) < 2:
        return None
    narratives = [
        narrative(r.index, dirs(r.index), sandboxes[r.index - 1], context.started_at)
        for r in finished
    ]
    try:
        spec = config.structagent.judge_model or config.gate.model or config.model
        judge = JsonAsker(make_model(spec, config.model_options), context, agent="bbon-judge")
        user = f"<task>\n{context.task.instruction}\n</task>\n\n" + "\n\n".join(narratives)
        pick, error = judge.ask(
            prompt("structagent_judge.md"),
            user,
            parse_pick([r.index for r in finished]),
            "best-of-n judge",
        )
    except StateActError as exc:
        log.warning("the best-of-n judge could not run: %s", exc)
        return None
    if pick is None:
        log.warning("the best-of-n judge gave no usable answer: %s", error)
        return None
    chosen = next(r for r in finished if r.index == pick["best"])
    reasons = [r.describe() for r in rollouts]
    reasons.append(
        f"selected rollout {chosen.index}: the judge compared the final states: {pick['reason']}"
    )
    return chosen, reasons


def narrative(index: int, run_dir, sandbox, started_at: float) -> str:
    """One candidate as the judge reads it."""
    lines = [f'<candidate rollout="{index}">']
    for event in load_events(run_dir):
        if event["event"] == "structagent_subgoal":
            lines.append(
                f"subgoal {event['number']}: {event['subgoal'][:160]} -> verified "
                f"{event['verified'] or 'nothing'}; unverified {event['unverified'] or 'none'}"
            )
        elif event["event"] in ("structagent_end", "done_refused"):
            lines.append(
                f"{event['event']}: {json.dumps(event.get('status') or event.get('requirements'))}"
            )
    state = TaskState.load(run_dir)
    if state is not None and sandbox is not None:
        state.path = None  # the judge's re-check is not the rollout's history
        try:
            state.check_boundary(sandbox, "best-of-n judge")
        except (ToolError, StateActError) as exc:
            lines.append(f"(the final probes could not run: {exc})")
        lines += [
            f"[{r.id}] {r.status}: {r.text[:120]} ({r.evidence[:160]})" for r in state.requirements
        ]
        lines += [f"value {k} = {v}" for k, v in list(state.values.items())[:10]]
    lines.append("files changed: " + ", ".join(_changed(sandbox, started_at)))
    text = "\n".join(lines)[:NARRATIVE_CHARS]
    return f"{text}\n</candidate>"


def _changed(sandbox, started_at: float) -> list[str]:
    if sandbox is None:
        return ["(no sandbox)"]
    try:
        listed = run(sandbox, FsChanged(started_at, limit=40)).paths
    except (ToolError, StateActError):
        return ["(unreadable)"]
    return [f"{p['path']} ({p['size']} bytes)" for p in listed] or ["(none)"]
