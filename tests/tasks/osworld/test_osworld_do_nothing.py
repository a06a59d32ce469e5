"""Issue 16's do-nothing run: every public OSWorld task the dry run calls runnable with no cache and
no network goes through `stateact suite`'s runner with an agent that changes nothing; each must
start without a setup error and score 0.

A score of 1 here means the checker passes on the untouched setup (a getter reading absent state as
a pass, a setup step that silently did nothing); a setup error means the dry run called a task
runnable that is not. OSWorld's infeasible tasks are no exception: their checker scores 1 only when
the agent declares the task infeasible, and this agent just finishes, so they must score 0 too.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from harness.apps.oracle import OSWORLD_SOLUTIONS
from harness.apps.suite import dry_run, run_suite
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from sandboxes.images.apps import declared_apps
from tasks.schema import Task
from tests.conftest import OSWORLD_EXAMPLES, require_image

pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.desktop,
    pytest.mark.skipif(not OSWORLD_EXAMPLES.is_dir(), reason="the OSWorld task files are not here"),
]

# Two sandboxes at a time: CI's machine has two cores, and a desktop task is mostly waiting.
PARALLEL = 2
# Read-only commands: the finish tool wants three steps before it ends a run.
LOOK_ONLY = ("true", "pwd", "id -u")
# The runs must stay a small part of CI's time budget (45 minutes for everything).
WALL_LIMIT_S = 20 * 60


def do_nothing(task: Task) -> ScriptedModel:
    """Three commands that change nothing, then `finish` (never `infeasible`)."""
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": c}}]} for c in LOOK_ONLY]
    turns.append({"tool_calls": [{"name": "finish", "input": {"summary": "did nothing"}}]})
    return ScriptedModel(turns, name="script/do-nothing")


# Tasks whose own setup does not reliably reach its starting state here (the oracle's list, with
# the reason): an untouched machine may then pass their checker, which says nothing about it.
UNRELIABLE_SETUP = json.loads((OSWORLD_SOLUTIONS / "pending.json").read_text())["unreliable_setup"]


def runnable_offline() -> list[str]:
    """The tasks `stateact suite --dry-run` calls runnable with no cache and no network."""
    records = dry_run([OSWORLD_EXAMPLES], None, lambda r: None, apps=declared_apps("desktop"))
    return [r["path"] for r in records if r["runnable"]]


def problems(line: dict) -> list[str]:
    """What is wrong with one task's result line (nothing, for a clean do-nothing run)."""
    found = []
    if line["status"] != "completed":
        found.append(f"status {line['status']}: {line.get('error')}")
    if line["score"] != 0:
        found.append(f"scores {line['score']} with nothing done")
    return found


@pytest.mark.timeout(WALL_LIMIT_S + 300)
def test_every_offline_runnable_task_starts_and_scores_zero_when_nothing_is_done(tmp_path, caplog):
    require_image("desktop")
    caplog.set_level(logging.WARNING, logger="tasks.setup")
    paths = runnable_offline()
    assert len(paths) >= 50, len(paths)  # the dry run's count: a drop is a regression too
    paths = [path for path in paths if Path(path).stem not in UNRELIABLE_SETUP]
    config = RunConfig(model="script/do-nothing", preset="no-verify")
    config.sandbox.image = "desktop"
    started = time.monotonic()
    summary = run_suite(
        paths, config, tmp_path / "suite", parallel=PARALLEL, model_factory=do_nothing
    )
    wall_s = time.monotonic() - started
    lines = [
        json.loads(x) for x in (tmp_path / "suite" / "results.jsonl").read_text().split("\n") if x
    ]
    print(f"\n{len(lines)} tasks in {wall_s:.0f} s ({PARALLEL} at a time)")
    assert summary["unfinished"] == 0 and len(lines) == len(paths)
    failing = {line["task_id"]: problems(line) for line in lines if problems(line)}
    # A window the setup activates that never came up is only a warning (as in OSWorld), but here
    # it means the launch step before it did not work.
    for record in caplog.records:
        if "no window" in record.getMessage():
            task_id = record.args[0]
            failing.setdefault(task_id, []).append(record.getMessage())
    report = "\n".join(f"{task}: {'; '.join(why)}" for task, why in sorted(failing.items()))
    assert not failing, f"{len(failing)} of {len(lines)} tasks fail:\n{report}"
    assert wall_s < WALL_LIMIT_S
