"""Milestone checkpoints: a sandbox snapshot whenever requirements turn VERIFIED, and resuming from it.

The milestones of a run are listed in `milestones.json` in its run directory and announced by a
`milestone` event whose position in the trajectory marks which tool calls came after it (only those
are replayed on resume). Only the newest snapshot is kept. Docker snapshots are committed images owned
by `run:<run dir>` rather than by this process, so the orphan reaper keeps them through a kill -9
until the run resumes; when a run writes its result, its snapshots are removed.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from pathlib import Path

from harness.kernel.records import load_events, write_json_atomic
from sandboxes import Snapshot

log = logging.getLogger(__name__)

MILESTONES_FILE = "milestones.json"
SNAPSHOT_REPOSITORY = "stateact-milestone"


def run_owner(run_dir: Path) -> str:
    """The owner label of a run's milestone images (never a live process, so never reaped)."""
    return f"run:{Path(run_dir).resolve()}"


def load_milestones(run_dir: Path) -> list[dict]:
    import json

    path = Path(run_dir) / MILESTONES_FILE
    return json.loads(path.read_text()) if path.exists() else []


def last_milestone(run_dir: Path) -> dict | None:
    """The newest milestone whose snapshot still exists, or None."""
    for milestone in reversed(load_milestones(run_dir)):
        if (
            not milestone.get("discarded")
            and not milestone.get("superseded")
            and _snapshot_exists(milestone["snapshot"])
        ):
            return milestone
    return None


def snapshot_of(milestone: dict | None) -> Snapshot | None:
    if milestone is None:
        return None
    data = milestone["snapshot"]
    return Snapshot(backend=data["backend"], ref=data["ref"], created_at=data["created_at"])


def take_snapshot(sandbox, run_dir: Path, number: int) -> Snapshot:
    """Freeze `sandbox` for the run in `run_dir`, surviving this process."""
    if sandbox.backend == "docker":
        from sandboxes.docker_backend import LABEL, OWNER_LABEL

        image = sandbox.container.commit(
            repository=SNAPSHOT_REPOSITORY,
            tag=uuid.uuid4().hex[:12],
            conf={"Labels": {LABEL: "1", OWNER_LABEL: run_owner(run_dir)}},
        )
        return Snapshot(backend="docker", ref=image.id, created_at=time.time())
    snapshot = sandbox.snapshot()
    # The local backend's snapshot is a temporary folder; keep it with the run instead.
    target = Path(run_dir) / "milestones" / str(number)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(snapshot.ref, target)
    return Snapshot(
        backend=snapshot.backend, ref=str(target.resolve()), created_at=snapshot.created_at
    )


def discard_snapshot(data: dict) -> bool:
    """Remove one snapshot; False when it must wait (a docker image a newer snapshot was built on)."""
    if data["backend"] != "docker":
        shutil.rmtree(data["ref"], ignore_errors=True)
        return True
    from docker.errors import APIError, NotFound

    from sandboxes.docker_backend import docker_client

    try:
        docker_client().images.remove(data["ref"], force=True)
    except NotFound:
        pass
    except APIError as exc:
        log.info("milestone image %s kept for now: %s", data["ref"][:19], exc)
        return False
    return True


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
            milestone["discarded"] = discard_snapshot(milestone["snapshot"])
        except Exception as exc:  # cleanup goes on; the reaper cannot see run-owned images
            log.warning(
                "could not remove milestone snapshot %s: %s", milestone["snapshot"]["ref"], exc
            )
            continue
        removed += milestone["discarded"]
    if milestones:
        write_json_atomic(Path(run_dir) / MILESTONES_FILE, milestones)
    return removed


def _snapshot_exists(data: dict) -> bool:
    if data["backend"] != "docker":
        return Path(data["ref"]).is_dir()
    from docker.errors import ImageNotFound

    from sandboxes.docker_backend import docker_client

    try:
        docker_client().images.get(data["ref"])
    except ImageNotFound:
        return False
    return True


class MilestoneKeeper:
    """A task-state listener: snapshots the sandbox when requirements turn VERIFIED."""

    def __init__(self, sandbox, record, started_at: float):
        self.sandbox = sandbox
        self.record = record
        self.started_at = started_at
        self.milestones = load_milestones(record.dir)

    def __call__(self, verified: list) -> None:
        number = len(self.milestones) + 1
        snapshot = take_snapshot(self.sandbox, self.record.dir, number)
        milestone = {
            "number": number,
            "event_index": len(load_events(self.record.dir)),
            "requirements": [r.id for r in verified],
            "snapshot": {
                "backend": snapshot.backend,
                "ref": snapshot.ref,
                "created_at": snapshot.created_at,
            },
            "started_at": self.started_at,
            "time": time.time(),
        }
        for older in self.milestones:  # only the newest is ever resumed from
            if not older.get("discarded") and not older.get("superseded"):
                older["superseded"] = True
                older["discarded"] = discard_snapshot(older["snapshot"])
        self.milestones.append(milestone)
        write_json_atomic(self.record.dir / MILESTONES_FILE, self.milestones)
        self.record.append("milestone", agent="harness", **milestone)
        log.info(
            "milestone %d: %s verified, snapshot %s",
            number,
            ", ".join(milestone["requirements"]),
            snapshot.ref[:19],
        )
