"""Where a stopped OSWorld 2.0 run goes on (`--resume`, or a suite's `--resume`).

The machine restarts from the newest phase snapshot (taken after the last judged phase but the
task's last; none before the first phase is judged: a fresh sandbox). The next phase is then set up
by the benchmark, once, on that snapshot, which predates the phase's setup, so none of the setup's
effects is doubled. When the run had got inside that phase (its setup had finished) and the control
mode can resume its agent, the agent goes on inside the phase: the phase's recorded state-changing
tool calls run again after the setup, and the main agent's history and the run's counters come back
from the trajectory (`harness/kernel/resume.py`). Otherwise a fresh agent starts the phase.

    point = resume_point(run_dir, config.control)   # None: nothing to resume, start afresh
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.control.milestones import load_milestones, snapshot_of
from harness.kernel.records import load_events
from sandboxes import snapshot_exists
from tasks.osworld2.scoring import PhaseVerdict

PHASE_KEY = "osworld2_phase"
"""A milestone's field naming the phase judged last before its snapshot."""
IN_PHASE_MODES = ("stateact",)
"""Control modes whose agent resumes inside a phase. The others keep no per-phase state to resume
from (andor's tree and lstc's long-term state are the run's, structagent restores no calls, the
screenshot baseline's clicks cannot be replayed): their phase is set up again and worked afresh."""


@dataclass(frozen=True)
class ResumePoint:
    """Where a resumed run starts: the snapshot, the verdicts kept, and, inside a phase, where that
    phase's agent work began in the trajectory."""

    milestone: dict | None
    """The phase snapshot's milestone the sandbox starts from; None: a fresh sandbox."""
    verdicts: list[PhaseVerdict]
    since_event_index: int | None
    """Inside a phase: the position of its `setup_done`; the calls after it are replayed."""
    turns_before: int
    """Main-agent turns the task took before this phase (its turn budget counts the whole task)."""

    @property
    def phase(self) -> int:
        """The phase the resumed run sets up first."""
        return len(self.verdicts)

    @property
    def in_phase(self) -> bool:
        return self.since_event_index is not None

    @property
    def after_phase(self) -> int | None:
        return self.milestone[PHASE_KEY] if self.milestone is not None else None


def phase_checkpoint(run_dir: Path) -> dict | None:
    """The newest phase milestone of an unfinished run whose snapshot still exists, or None (a
    task state's milestones taken inside a phase are not phase checkpoints)."""
    for milestone in reversed(load_milestones(run_dir)):
        if (
            PHASE_KEY in milestone
            and not milestone.get("discarded")
            and not milestone.get("superseded")
            and snapshot_exists(snapshot_of(milestone))
        ):
            return milestone
    return None


def resume_point(run_dir: Path, control: str) -> ResumePoint | None:
    """Where the unfinished run in `run_dir` resumes under `control`; None when there is nothing
    to resume (no phase judged, and no phase the mode can resume inside)."""
    milestone = phase_checkpoint(run_dir)
    verdicts = [PhaseVerdict(**v) for v in milestone["verdicts"]] if milestone else []
    events = load_events(run_dir)
    since = phase_start(events, len(verdicts)) if control in IN_PHASE_MODES else None
    if milestone is None and since is None:
        return None
    before = events[:since] if since is not None else []
    turns = sum(e["event"] == "model_turn" and e.get("agent") == "main" for e in before)
    return ResumePoint(milestone, verdicts, since, turns)


def phase_start(events: list[dict], phase: int) -> int | None:
    """The position of `phase`'s first `setup_done` after the previous phase was last judged (a
    resumed phase records another each time; its work began at the first); None when its setup
    never finished."""
    start = 0
    for index, event in enumerate(events):
        if event["event"] == "phase_judged" and event.get("phase") == phase - 1:
            start = index
    for index in range(start, len(events)):
        if events[index]["event"] == "setup_done" and events[index].get("phase") == phase:
            return index
    return None
