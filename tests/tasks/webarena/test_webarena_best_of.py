"""`--best-of N` on a WebArena task: the chosen rollout's `finish` answer is the one string_match
scores (never another rollout's). The local sandbox runs the scripted rollouts; the task's browser
setup is left out, as string_match reads only the answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import load_task
from tests.control_helpers import bash, call

TASK = Path(__file__).parents[2] / "webarena_standin" / "tasks" / "188.json"  # must_include 365.42


pytestmark = pytest.mark.usefixtures("fresh_deployment")


@pytest.fixture
def bwrap():
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")


def best_of_two(tmp_path, gate_passes: int) -> dict:
    """Rollout 1 answers wrong, rollout 2 right; the gate passes only rollout `gate_passes`."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": {"shopping": "http://127.0.0.1:9"}}))
    item = {**json.loads(TASK.read_text()), "require_login": False, "storage_state": None}
    path = tmp_path / "188.json"
    path.write_text(json.dumps(item))
    task = load_task(path).model_copy(update={"config": []})  # no browser: string_match only
    config = RunConfig(model="script/test", sites=str(sites), best_of=2)
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    config.gate.max_rejections = 1  # the first rejection ends a rollout
    agents = [
        ScriptedModel([*[bash("pwd")] * 3, call("finish", summary=answer)])  # finish needs 3 steps
        for answer in ("The latest cancelled order cost $754.99.", "It cost $365.42.")
    ]
    verdicts = [
        call("verdict", passed=index == gate_passes, gaps=[] if index == gate_passes else ["no"])
        for index in (1, 2)
    ]
    gates = [ScriptedModel([verdict]) for verdict in verdicts]
    return run_task(task, config, tmp_path / "run", model=agents, gate_model=gates)


def test_the_chosen_rollouts_right_answer_scores_1(tmp_path, bwrap):
    result = best_of_two(tmp_path, gate_passes=2)
    assert result["best_of"]["selected"] == 2 and result["status"] == "completed", result
    assert result["score"] == 1.0


def test_the_chosen_rollouts_wrong_answer_scores_0_though_another_was_right(tmp_path, bwrap):
    result = best_of_two(tmp_path, gate_passes=1)
    assert result["best_of"]["selected"] == 1 and result["status"] == "completed", result
    assert result["score"] == 0.0
