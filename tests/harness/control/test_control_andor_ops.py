"""`--andor-grain op` in a real desktop-image sandbox against a page served inside it: every action
node is one browser (or file) operation of one model turn, a second call in the same reply is not
run, the browser keeps its page from one node to the next, and with `--andor-or off` the OR node's
other alternative is never tried (a repair recovers instead)."""

from __future__ import annotations

import json
import re

import pytest

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.conftest import require_image
from tests.control_helpers import RoutedModel, call, user_text

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

PICK = "/home/user/pick.txt"
PORT = 8766
URL = f"http://127.0.0.1:{PORT}/shop.html"
PAGE = """<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1>
<ul><li>Pen: $3</li><li>Mug: $12</li></ul></body></html>"""
SERVE = f"cd /home/user/site && exec python3 -m http.server {PORT} --bind 127.0.0.1"
READY = (
    'for i in $(seq 100); do python3 -c "import urllib.request as u; '
    f"u.urlopen('{URL}')\" 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
)


def goal_of(messages: list[dict]) -> str:
    return re.search(r"<your-subgoal>\n(.*?)\n</your-subgoal>", user_text(messages[:1])).group(1)


def operation(system, messages, tools):
    goal = goal_of(messages)
    if goal == "Open the shop":  # two calls in one reply: only the first is the node's operation
        return {
            "tool_calls": [
                {"name": "navigate", "input": {"url": URL}},
                {"name": "read_dom", "input": {}},
            ]
        }
    if goal == "Open the deals tab":
        return call("click", selector="#deals")  # there is no such element: the node fails
    if goal == "Read the open page":
        return call("read_dom")
    assert goal == "Write the pick", goal
    return call("bash", command=f"echo Pen > {PICK}")


def planner(system, text):
    node = re.search(r'<node id="([\d.]+)"', text).group(1)
    if "candidate table" in system:
        seen = text.split("<latest-report", 1)[1].split("\n")[1][:60]
        return {
            "observation": f"node {node} saw {seen}",
            "progress": f"up to node {node}",
            "notes": "the shop lists Pen and Mug" if "Pen" in text else "",
            "constraints": [],
            "needed": None,
            "candidates": [],
        }
    if "alternative strategy" in system:
        return {"scores": {"1.2.1": 0.9, "1.2.2": 0.1}}
    if "plan one node" in system and node == "1":
        return {
            "type": "and",
            "children": [
                {"goal": "Open the shop", "type": "action"},
                {"goal": "Find the cheapest item", "type": "or"},
                {
                    "goal": "Write the pick",
                    "type": "action",
                    "probe": {"kind": "file_grep", "path": PICK, "patterns": ["^Pen$"]},
                },
            ],
        }
    if "plan one node" in system and node == "1.2":
        return {
            "type": "or",
            "children": [
                {"goal": "Open the deals tab", "type": "action"},
                {"goal": "Search the page for prices", "type": "action"},
            ],
        }
    if "failed" in system:  # the OR node's repair: read the page the first node opened
        assert node == "1.2", text
        return {"children": [{"goal": "Read the open page", "type": "action"}]}
    if "Decide whether the node" in system:
        return {"done": "Pen: $3" in text or "Loaded Shop" in text, "reason": "the report"}
    return {"prune": [], "rewrite": {}}


def test_op_grain_runs_one_browser_operation_per_node_and_or_off_tries_no_alternative(tmp_path):
    require_image("desktop")
    config = RunConfig(model="script/test", control="andor")
    config.sandbox.image = "desktop"
    config.subagents.enabled = ["web"]
    config.andor.grain, config.andor.alternatives = "op", False
    site = "import os; os.makedirs('/home/user/site', exist_ok=True); "
    code = site + f"open('/home/user/site/shop.html', 'w').write({PAGE!r})"
    task = Task.model_validate(
        {
            "id": "andor-op",
            "instruction": f"Open {URL}, find the cheapest item and write its name into {PICK}.",
            "config": [
                {"type": "execute", "parameters": {"command": ["python3", "-c", code]}},
                {"type": "launch", "parameters": {"command": ["bash", "-c", SERVE]}},
                {"type": "execute", "parameters": {"command": ["bash", "-c", READY]}},
            ],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )
    model = RoutedModel(planner, operation)
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    out = tmp_path / "run"
    result = run_task(task, config, out, model=model, gate_model=gate)
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    events = [json.loads(line) for line in (out / "trajectory.jsonl").read_text().splitlines()]
    turns = [
        e["agent"] for e in events if e["event"] == "model_turn" and e["agent"].startswith("andor-")
    ]
    assert turns == ["andor-1.1", "andor-1.2.1", "andor-1.2.3", "andor-1.3"]  # one turn each
    results = {
        e["agent"]: [c["content"][0]["text"] for c in e["content"]]
        for e in events
        if e["event"] == "tool_results" and e["agent"].startswith("andor-")
    }
    assert results["andor-1.1"][0].startswith("Loaded Shop")
    assert results["andor-1.1"][1].startswith("Not run: an action node is one operation")
    # the page the first node opened is still open when the repair's node reads it
    assert "Pen: $3" in results["andor-1.2.3"][0] and "Mug: $12" in results["andor-1.2.3"][0]
    tree = json.loads((out / "tree.json").read_text())
    alternatives = tree["root"]["children"][1]["children"]
    assert [(c["id"], c["status"]) for c in alternatives] == [
        ("1.2.1", "failed"),
        ("1.2.2", "pruned"),  # --andor-or off: never tried
        ("1.2.3", "succeeded"),
    ]
    # the observation summarizer's representations (StructuredAgent Table 27) are kept and shown
    memory = tree["memory"]
    assert [h.split(":")[0] for h in memory["history"]] == ["1.1", "1.2.3", "1.3"]
    assert [a.split(" ")[0] for a in memory["actions"]] == ["1.1", "1.2.1", "1.2.3", "1.3"]
    assert memory["progress"] == "up to node 1.3" and "Pen and Mug" in memory["notes"]
    asked = [c["text"] for c in model.planner_calls if "Decide whether the node" in c["system"]]
    assert "interaction history:\n- 1.1: node 1.1 saw" in asked[-1]
    assert "action history:" in asked[-1] and "task progress: up to node" in asked[-1]
    metrics = result["control_stats"]["tree"]
    assert (metrics["or_switches"], metrics["repairs"], metrics["actions"]) == (0, 1, 4)
    assert result["options"]["andor_grain"] == "op" and result["options"]["andor_or"] is False
