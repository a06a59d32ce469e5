"""StructuredAgent's four arms (Full, Repair-only, OR-only, Neither) as `--andor-repair` and
`--andor-or`, through the real runner and a real (bubblewrap) sandbox: the same scripted tree
recovers by its OR alternative (Full, OR-only), by a repair that never tries the alternative
(Repair-only), or fails (Neither); the tree's metrics are in `result.json` and the arms split
`by_option`."""

from __future__ import annotations

import json

import pytest

from harness.models.scripted import ScriptedModel
from harness.reports.summary import summarize
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.control_helpers import RoutedModel, bash, call
from tests.harness.control.test_control_andor import grep, node_goal, nodes, worker

A, B = "/home/user/a.txt", "/home/user/b.txt"
SCRIPTS = {
    "write a.txt": [bash(f"echo A > {A}")],
    "b.txt via python": [call("python", code=f"open('{B}', 'w').write('not b')")],
    "b.txt via bash": [bash(f"echo B > {B}")],
    "b.txt by printf": [bash(f"printf 'B\\n' > {B}")],
}


def planner(system, text):
    if "candidate table" in system:
        return {"constraints": [], "needed": None, "candidates": []}
    if "alternative strategy" in system:
        return {"scores": {"1.2.1": 0.8, "1.2.2": 0.4}}
    if "plan one node" in system:
        if node_goal(text).startswith("Create"):
            return {
                "type": "and",
                "children": [
                    {"goal": "write a.txt", "type": "action", "probe": grep(A, "A")},
                    {"goal": "write b.txt"},
                ],
            }
        return {
            "type": "or",
            "children": [
                {"goal": "b.txt via python", "type": "action", "probe": grep(B, "B")},
                {"goal": "b.txt via bash", "type": "action", "probe": grep(B, "B")},
            ],
        }
    if "failed" in system:  # the repair of the OR node 1.2
        assert '<node id="1.2"' in text, text
        return {"children": [{"goal": "b.txt by printf", "type": "action", "probe": grep(B, "B")}]}
    if "just succeeded" in system:
        return {"prune": [], "rewrite": {}}
    raise AssertionError(f"unexpected planner request: {system[:80]}")


def arm(tmp_path, name: str, repair: bool, alternatives: bool):
    config = RunConfig(model="script/test", control="andor")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    config.andor.repair, config.andor.alternatives = repair, alternatives
    task = Task.model_validate(
        {
            "id": name,
            "instruction": f"Create {A} holding A and {B} holding B.",
            "evaluator": {
                "func": "check_include_exclude",
                "result": {"type": "vm_command_line", "command": f"cat {B}", "shell": True},
                "expected": {"type": "rule", "rules": {"include": ["B"], "exclude": ["not b"]}},
            },
            "base_dir": tmp_path,
        }
    )
    model = RoutedModel(planner, worker(SCRIPTS))
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    out = tmp_path / name
    result = run_task(task, config, out, model=model, gate_model=gate)
    tree = nodes(json.loads((out / "tree.json").read_text()))
    ran = [
        json.loads(line)["agent"]
        for line in (out / "trajectory.jsonl").read_text().splitlines()
        if '"event": "task"' in line
    ]
    return result, tree, ran


def test_the_four_arms_of_repair_and_or(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    full, tree, ran = arm(tmp_path, "full", repair=True, alternatives=True)
    assert full["status"] == "completed" and tree["1.2.2"]["status"] == "succeeded"
    assert full["control_stats"]["tree"] == {
        "nodes": 5,
        "depth": 2,
        "repairs": 0,
        "or_switches": 1,
        "pruned": 0,
        "actions": 3,
        "revisions": full["control_stats"]["tree"]["revisions"],
        "tree_efficiency": 1.0,
        "plan_preservation": 1.0,
        "recovery_rate": 0.0,  # no repair was attempted: the paper's convention
    }

    repair_only, tree, ran = arm(tmp_path, "repair-only", repair=True, alternatives=False)
    assert repair_only["status"] == "completed", repair_only
    assert tree["1.2.2"]["status"] == "pruned" and "andor-1.2.2" not in ran  # never tried
    assert tree["1.2"]["revisions"] == 1 and tree["1.2.3"]["status"] == "succeeded"
    stats = repair_only["control_stats"]["tree"]
    assert (stats["repairs"], stats["or_switches"], stats["pruned"]) == (1, 0, 1)
    # 6 nodes; the repair retired 1.2.1 (failed) and 1.2.2 (pruned) and added 1.2.3: 4 of 6 live,
    # 3 of the 5 planned kept, and its one attempt restored 1.2
    assert (stats["tree_efficiency"], stats["plan_preservation"], stats["recovery_rate"]) == (
        0.667,
        0.6,
        1.0,
    )

    or_only, tree, ran = arm(tmp_path, "or-only", repair=False, alternatives=True)
    assert or_only["status"] == "completed" and or_only["control_stats"]["tree"]["or_switches"] == 1

    neither, tree, ran = arm(tmp_path, "neither", repair=False, alternatives=False)
    assert neither["status"] == "tree_failed", neither
    assert "andor-1.2.2" not in ran and tree["1.2"]["revisions"] == 0
    assert neither["control_stats"]["tree"]["repairs"] == 0

    arms = [full, repair_only, or_only, neither]
    assert [(r["options"]["andor_repair"], r["options"]["andor_or"]) for r in arms] == [
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    ]
    summary = summarize(arms)
    assert summary["by_option"]["andor_or"]["false"]["tasks"] == 2
    assert [r["success"] for r in arms] == [True, True, True, False]
    assert summary["by_option"]["andor_repair"]["false"]["successes"] == 1
    assert summary["by_option"]["andor_or"]["false"]["success_rate"] == 0.5


@pytest.mark.parametrize("grain", ["subtask"])
def test_the_default_grain_is_recorded(grain):
    assert RunConfig().options()["andor_grain"] == grain
