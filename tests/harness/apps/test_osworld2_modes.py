"""OSWorld 2.0 beyond the default run: inline checkpoint evaluation (`checkpoint_eval_mode=inline`)
and the `andor` and `lstc` control modes, each through the stand-in checkout on a real desktop
sandbox with scripted models; the scores are the stand-in's own `evaluate()` verdicts."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import require_image
from tests.control_helpers import RoutedModel, assistant_turns, call
from tests.harness.apps.test_osworld2_run import (
    ASK_USER,
    FINISH,
    LOOK,
    MULTIPHASE,
    STANDIN,
    _config,
    bash,
    models,  # noqa: F401 -- the fixture
)

INLINE = STANDIN / "tasks" / "task_inline.py"
REPORT = "/home/user/report.txt"


def test_checkpoint_options_and_their_bad_values():
    from harness.apps.osworld2_options import checkpoint_options
    from harness.kernel.core import StateActError

    assert _config().osworld2.checkpoint_eval_mode == "off"
    inline = _config(checkpoint_eval_mode="inline").osworld2
    assert (inline.checkpoint_eval_mode, inline.checkpoint_steps) == ("inline", [150, 300])
    assert checkpoint_options("inline", "300,5,5") == {
        "checkpoint_eval_mode": "inline",
        "checkpoint_steps": [5, 300],
    }
    for mode, steps, sentence in [
        ("off", "5", "--checkpoint-steps goes with --checkpoint-eval-mode inline."),
        ("inline", "five", "--checkpoint-steps must be turn numbers, like 150,300."),
        ("inline", "0", "--checkpoint-steps must be turn numbers of at least 1."),
        ("often", None, "--checkpoint-eval-mode must be one of off, inline."),
    ]:
        with pytest.raises(StateActError) as caught:
            checkpoint_options(mode, steps)
        assert str(caught.value) == sentence


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_inline_evaluation_scores_the_work_so_far_at_each_step(tmp_path):
    """Steps 1 and 2: after the first turn only ~/one.txt is there (the stand-in gives 0.5), after
    the second both (1.0); the phase's score is still the evaluation after the agent stopped."""
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.models.scripted import ScriptedModel

    agent = ScriptedModel(
        [bash("echo one > ~/one.txt"), bash("echo two > ~/two.txt"), *LOOK, FINISH]
    )
    config = _config(checkpoint_eval_mode="inline", checkpoint_steps="1,2")
    result = run_osworld2_task(INLINE, config, tmp_path / "run", model=agent)
    assert (result["status"], result["score"]) == ("completed", 1.0), result["error"]
    inline = result["inline_evaluations"]
    assert [(e["phase"], e["step"], e["score"], e["error"]) for e in inline] == [
        (0, 1, 0.5, None),
        (0, 2, 1.0, None),
    ]
    assert [c["score"] for c in inline[0]["checkpoints"]] == [1.0, 0.0]
    assert result["options"]["checkpoint_eval_mode"] == "inline"
    assert result["options"]["checkpoint_steps"] == [1, 2]
    events = [json.loads(line) for line in (tmp_path / "run" / "trajectory.jsonl").open()]
    assert [e["step"] for e in events if e["event"] == "inline_evaluation"] == [1, 2]
    # the default mode evaluates once, at the end
    again = ScriptedModel([bash("echo one > ~/one.txt"), *LOOK, FINISH])
    off = run_osworld2_task(INLINE, _config(), tmp_path / "off", model=again)
    assert (off["score"], "inline_evaluations" in off) == (0.5, False)


# -- andor: one AND node per phase, its leaf worker writes, the node's probe checks ----------------


def andor_planner(system, text):
    word = "beta" if "Append 'beta'" in text else "alpha"
    if "candidate table" in system:
        return {"constraints": [], "needed": None, "candidates": []}
    if "plan one node" in system:
        probe = {"kind": "file_grep", "path": REPORT, "patterns": [word]}
        return {
            "type": "and",
            "children": [{"goal": f"write {word}", "type": "action", "probe": probe}],
        }
    if "just succeeded" in system:
        return {"prune": [], "rewrite": {}}
    if "Decide whether the node" in system:  # the root's completion check (no finish gate here)
        return {"done": True, "reason": "the report is written"}
    if "failed" in system:
        return {"give_up": True}
    raise AssertionError(f"unexpected planner request: {system[:80]}")


def andor_worker(system, messages, tools):
    if assistant_turns(messages) == 0:
        said = json.dumps(messages)
        command = "echo beta >> ~/report.txt" if "beta" in said else "echo alpha > ~/report.txt"
        return bash(command)
    return call("report", text="written")


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_andor_runs_every_phase_and_scores_as_the_standin(tmp_path, models):  # noqa: F811
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task

    config = _config(control="andor")
    config.subagents.enabled = []
    with models([{"text": "yes"}]) as judge:
        result = run_osworld2_task(
            MULTIPHASE, config, tmp_path / "andor", model=RoutedModel(andor_planner, andor_worker)
        )
    assert judge.completion_requests()[0]["json"]["model"] == "judge-small"
    assert (result["status"], result["control"], result["score"]) == ("completed", "andor", 1.0), (
        result["error"]
    )
    first, second = result["phase_results"]
    assert [(c["name"], c["score"]) for c in first["checkpoints"]] == [
        ("report has alpha", 1.0),
        ("judge likes it", 1.0),
    ]
    assert [(c["name"], c["score"]) for c in second["checkpoints"]] == [("report has beta", 1.0)]
    phases = json.loads((tmp_path / "andor" / "phase_results.json").read_text())
    assert [p["score"] for p in phases] == [1.0, 1.0]


# -- lstc: the planner asks the user, writes the colour, finishes ----------------------------------


class LstcPlanner:
    def __init__(self):
        self.plans = 0

    def __call__(self, system, text):
        if "candidate next steps" not in system:
            raise AssertionError(f"unexpected planner request: {system[:80]}")
        self.plans += 1
        if self.plans == 1:
            actions = [{"tool": "ask_user", "input": "Which colour?"}]
        elif self.plans == 2:
            said = re.search(r"USER ANSWERS:\n- Q: Which colour\? A: (\w+)", text)
            colour = said.group(1).lower() if said else "unknown"
            actions = [{"tool": "bash", "input": f"echo {colour} > ~/colour.txt"}]
        else:
            actions = [{"tool": "done", "input": "the colour is written"}]
        return json.dumps({"candidates": [{"subgoal": "write the colour", "actions": actions}]})


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_lstc_asks_the_simulated_user_and_scores_as_the_standin(tmp_path, models):  # noqa: F811
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task

    config = _config(control="lstc", user_model="openai/user-sim")
    config.lstc.abstraction = "lines"
    config.lstc.final_verification = False
    with models([{"text": "Teal, please."}]) as user:
        result = run_osworld2_task(
            ASK_USER, config, tmp_path / "lstc", model=RoutedModel(LstcPlanner())
        )
    assert user.completion_requests()[0]["json"]["model"] == "user-sim"
    assert (result["status"], result["control"], result["score"]) == ("completed", "lstc", 1.0), (
        result["error"]
    )
    checkpoints = result["phase_results"][0]["checkpoints"]
    assert [(c["name"], c["score"]) for c in checkpoints] == [
        ("colour written", 1.0),
        ("palette open", 1.0),
    ]
    events = [json.loads(line) for line in (tmp_path / "lstc" / "trajectory.jsonl").open()]
    assert [e["answer"] for e in events if e["event"] == "ask_user"] == ["Teal, please."]
