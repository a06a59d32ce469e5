"""`--control andor` with scripted planner and worker answers against a real (bubblewrap)
sandbox: a failed action is recovered by repairing its AND parent and by an OR alternative, the
tree is saved with statuses and revisions, `stateact report` draws it, and a subgoal injected
into the running tree runs next."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import REPO
from tests.control_helpers import RoutedModel, assistant_turns, bash, call

A, B, C = "/home/user/out/a.txt", "/home/user/out/b.txt", "/home/user/out/c.txt"


def grep(path: str, word: str) -> dict:
    return {"kind": "file_grep", "path": path, "patterns": [f"^{word}$"]}


def subgoal(messages: list[dict]) -> str:
    first = messages[0]["content"][0]["text"]
    return re.search(r"<your-subgoal>\n(.*?)\n</your-subgoal>", first, re.S).group(1)


def node_goal(text: str) -> str:
    return re.search(r"<node [^>]*>\n(.*?)\n</node>", text, re.S).group(1)


def worker(scripts: dict):
    """Each action node's worker plays the script for its subgoal, then reports."""

    def turn(system, messages, tools):
        steps = scripts[subgoal(messages)]
        index = assistant_turns(messages)
        return (
            steps[index] if index < len(steps) else call("report", text=f"did: {subgoal(messages)}")
        )

    return turn


def run(tmp_path, planner, scripts, on_turn=None):
    config = RunConfig(model="script/test", control="andor")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    task = Task.model_validate(
        {
            "id": "andor",
            "instruction": f"Create {A} holding A and {B} holding B.",
            "config": [],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )
    model = RoutedModel(planner, worker(scripts))
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    result = run_task(task, config, tmp_path / "run", model=model, gate_model=gate, on_turn=on_turn)
    return result, model, json.loads((tmp_path / "run" / "tree.json").read_text())


def nodes(tree: dict) -> dict:
    found = {}

    def walk(node):
        found[node["id"]] = node
        for child in node["children"]:
            walk(child)

    walk(tree["root"])
    return found


def test_repair_and_or_alternative_recover_failed_nodes(tmp_path):
    def planner(system, text):
        if "candidate table" in system:
            return {"constraints": [], "needed": None, "candidates": []}
        if "alternative strategy" in system:  # the listed order by score: python first
            return {"scores": {"1.4.1": 0.7, "1.4.2": 0.5}}
        if "plan one node" in system:
            goal = node_goal(text)
            if goal.startswith("Create"):
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
        if "failed" in system:  # repair of the root after 1.1 failed
            return {
                "children": [
                    {"goal": "write a.txt correctly", "type": "action", "probe": grep(A, "A")},
                    {"goal": "write b.txt"},
                ]
            }
        if "just succeeded" in system:
            return {"prune": [], "rewrite": {}}
        raise AssertionError(f"unexpected planner request: {system[:80]}")

    scripts = {
        "write a.txt": [bash("mkdir -p /home/user/out && echo WRONG > /home/user/out/a.txt")],
        "write a.txt correctly": [bash(f"echo A > {A}")],
        "b.txt via python": [call("python", code=f"open('{B}', 'w').write('not b')")],
        "b.txt via bash": [bash(f"echo B > {B}")],
    }
    result, model, tree = run(tmp_path, planner, scripts)
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    assert result["control"] == "andor"
    by_id = nodes(tree)
    assert (
        by_id["1"]["kind"] == "and"
        and by_id["1"]["status"] == "succeeded"
        and by_id["1"]["revisions"] == 1
    )
    assert (
        by_id["1.1"]["status"] == "failed"
        and by_id["1.1"]["retired"]
        and "check failed" in by_id["1.1"]["report"]
    )
    assert (
        by_id["1.2"]["status"] == "pruned" and by_id["1.2"]["retired"]
    )  # its failed sibling pruned it
    assert by_id["1.3"]["status"] == "succeeded"
    assert by_id["1.4"]["kind"] == "or" and by_id["1.4"]["status"] == "succeeded"
    assert by_id["1.4.1"]["status"] == "failed" and by_id["1.4.2"]["status"] == "succeeded"
    assert by_id["1.4.1"]["score"] == 0.7 and by_id["1.4.2"]["score"] == 0.5
    assert tree["revisions"] >= 4  # expansions, the pruning and the repair
    history = [
        json.loads(line) for line in (tmp_path / "run" / "tree.jsonl").read_text().splitlines()
    ]
    assert len(history) == tree["steps"] and history[-1]["tree"] == {**tree, "steps": tree["steps"]}
    assert not any("tool" in json.dumps(c["system"]) and "tools" in c for c in model.planner_calls)

    report = subprocess.run(
        [sys.executable, "-m", "harness.cli", "report", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert report.returncode == 0, report.stderr
    drawing = report.stdout
    assert "AND/OR tree" in drawing and "[+] 1 AND Create" in drawing and "rev 1" in drawing
    assert "├─ [x] 1.1 ACTION write a.txt (failed, retired)" in drawing
    assert "[-] 1.2" in drawing and "[x] 1.4.1 ACTION b.txt via python" in drawing
    assert "└─ [+] 1.4.2 ACTION b.txt via bash" in drawing


def test_a_subgoal_injected_into_the_running_tree_runs_next(tmp_path):
    run_dir = tmp_path / "run"

    def planner(system, text):
        if "plan one node" in system:
            return {
                "type": "and",
                "children": [
                    {"goal": "write a.txt", "type": "action", "probe": grep(A, "A")},
                    {"goal": "write b.txt", "type": "action", "probe": grep(B, "B")},
                ],
            }
        return {"prune": [], "rewrite": {}}

    scripts = {
        "write a.txt": [bash(f"mkdir -p /home/user/out && echo A > {A}")],
        "write b.txt": [bash(f"echo B > {B}")],
        "also write c.txt": [bash(f"echo C > {C}")],
    }

    def inject_once(stats):  # while the first worker runs, a user adds a corrective subgoal
        if stats.model_turns == 2 and not (run_dir / "inject.json").exists():
            (run_dir / "inject.json").write_text(
                json.dumps({"goal": "also write c.txt", "probe": grep(C, "C")})
            )

    result, _, tree = run(tmp_path, planner, scripts, on_turn=inject_once)
    assert result["status"] == "completed", result
    by_id = nodes(tree)
    assert (
        by_id["1.3"]["injected"]
        and by_id["1.3"]["goal"] == "also write c.txt"
        and by_id["1.3"]["status"] == "succeeded"
    )
    assert not (run_dir / "inject.json").exists() and (run_dir / "inject.consumed-1.json").exists()
    events = [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()]
    workers = [
        e["agent"] for e in events if e["event"] == "model_turn" and e["agent"].startswith("andor-")
    ]
    order = list(dict.fromkeys(workers))
    assert order == ["andor-1.1", "andor-1.3", "andor-1.2"]  # the injected subgoal ran next
    assert any(e["event"] == "inject" and e.get("node") == "1.3" for e in events)


def test_action_nodes_that_change_nothing_are_a_stall_answered_by_feedback_then_a_replan(
    tmp_path,
):
    goals = [f"look around {n}" for n in range(1, 6)]

    def planner(system, text):
        if "plan one node" in system:
            return {"type": "and", "children": [{"goal": g, "type": "action"} for g in goals]}
        if "Decide whether the node" in system:
            return {"done": True, "reason": "the report says so"}
        if "failed" in system:  # the root's repair after the forced replan
            return {"give_up": True}
        return {"prune": [], "rewrite": {}}

    seeds = []

    def looker(system, messages, tools):
        seeds.append(messages[0]["content"][0]["text"])
        return call("report", text="looked; nothing to change")

    config = RunConfig(model="script/test", control="andor")
    config.sandbox.backend = "local"
    config.subagents.enabled = []
    config.stall.no_progress_turns = 2
    task = Task.model_validate(
        {"id": "stall", "instruction": "Look.", "config": [], "evaluator": {}, "base_dir": tmp_path}
    )
    result = run_task(task, config, tmp_path / "run", model=RoutedModel(planner, looker))
    assert result["status"] == "tree_failed", result
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    stalls = [(e["kind"], e["response"]) for e in events if e["event"] == "stall"]
    assert stalls == [("no_progress", "feedback"), ("no_progress", "replan")]
    assert "STALL:" not in seeds[2] and "STALL: 2 turns changed no file" in seeds[3]
    by_id = nodes(json.loads((tmp_path / "run" / "tree.json").read_text()))
    assert by_id["1.5"]["status"] == "failed" and "[stalled:" in by_id["1.5"]["report"]
