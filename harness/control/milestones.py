"""Milestone checkpoints: a sandbox snapshot whenever requirements turn VERIFIED, and resuming
from it.

The milestones of a run are listed in `milestones.json` in its run directory and announced by a
`milestone` event whose position in the trajectory marks which tool calls came after it (only
those are replayed on resume). Only the newest snapshot is kept. Snapshots are the sandbox's
persisted ones (`Sandbox.persist`: owned by the run directory rather than by this process, so
they survive a kill -9 until the run resumes); when a run writes its result, its snapshots are
removed.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict
from pathlib import Path

from harness.kernel.records import load_events, write_json_atomic
from sandboxes import Snapshot, discard_snapshot, snapshot_exists

log = logging.getLogger(__name__)

MILESTONES_FILE = "milestones.json"
PINNED = "pinned"
"""A milestone's field: a newer milestone does not supersede it (an OSWorld 2.0 phase's snapshot,
which a run stopped inside the next phase resumes from, outlives the task state's milestones
taken in that phase)."""


def load_milestones(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / MILESTONES_FILE
    return json.loads(path.read_text()) if path.exists() else []


def last_milestone(run_dir: Path) -> dict | None:
    """The newest milestone whose snapshot still exists, or None."""
    for milestone in reversed(load_milestones(run_dir)):
        if (
            not milestone.get("discarded")
            and not milestone.get("superseded")
            and snapshot_exists(snapshot_of(milestone))
        ):
            return milestone
    return None


def snapshot_of(milestone: dict | None) -> Snapshot | None:
    return Snapshot(**milestone["snapshot"]) if milestone is not None else None


def discard_milestones(run_dir: Path) -> int:
    """Remove every kept snapshot of the run (it has a result; nothing will resume it)."""
    milestones = load_milestones(run_dir)
    removed = 0
    for milestone in reversed(
        milestones
    ):  # newest first: a newer image may be built on an older one
        if milestone.get("discarded"):
            continue
        try:
            milestone["discarded"] = discard_snapshot(snapshot_of(milestone))
        except Exception as exc:  # cleanup goes on; the reaper cannot see run-owned images
            log.warning(
                "could not remove milestone snapshot %s: %s", milestone["snapshot"]["ref"], exc
            )
            continue
        removed += milestone["discarded"]
    if milestones:
        write_json_atomic(Path(run_dir) / MILESTONES_FILE, milestones)
    return removed


class MilestoneKeeper:
    """A task-state listener: snapshots the sandbox when requirements turn VERIFIED."""

    def __init__(self, sandbox, record, started_at: float):
        self.sandbox = sandbox
        self.record = record
        self.started_at = started_at
        self.milestones = load_milestones(record.dir)

    def __call__(self, verified: list) -> None:
        number = len(self.milestones) + 1
        snapshot = self.sandbox.persist(self.record.dir, f"milestone-{number}")
        milestone = {
            "number": number,
            "event_index": len(load_events(self.record.dir)),
            "requirements": [r.id for r in verified],
            "snapshot": asdict(snapshot),
            "started_at": self.started_at,
            "time": time.time(),
        }
        for older in self.milestones:  # only the newest is ever resumed from
            if not older.get("discarded") and not older.get("superseded") and not older.get(PINNED):
                older["superseded"] = True
                older["discarded"] = discard_snapshot(snapshot_of(older))
        self.milestones.append(milestone)
        write_json_atomic(self.record.dir / MILESTONES_FILE, self.milestones)
        self.record.append("milestone", agent="harness", **milestone)
        log.info(
            "milestone %d: %s verified, snapshot %s",
            number,
            ", ".join(milestone["requirements"]),
            snapshot.ref[:19],
        )
