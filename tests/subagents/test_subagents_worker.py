"""The worker specialist in a real base-image sandbox: its exploration stays out of the main
context."""

from __future__ import annotations

import json

import pytest

from harness.kernel.loop import RunStats, ToolLoop
from harness.kernel.records import RunRecord
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.run.context import RunContext
from harness.tools import BashTool
from subagents import DelegateTool, ReportTool

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BIG_PRINT = "print('x' * 20000)"


class SnapshotModel(ScriptedModel):
    """A scripted model that keeps a copy of every request (the loop keeps appending to its
    list)."""

    def complete(self, system, messages, tools):
        reply = super().complete(system, messages, tools)
        self.calls[-1] = {**self.calls[-1], "messages": json.loads(json.dumps(messages))}
        return reply


def _size(call: dict) -> int:
    return len(json.dumps(call["messages"]))


def _tool_names(call: dict) -> list[str]:
    return [spec.name for spec in call["tools"]]


def test_a_long_exploration_adds_only_the_report_to_the_main_context(base_sandbox, tmp_path):
    worker_turns = [
        {"tool_calls": [{"name": "bash", "input": {"command": "cd /tmp && seq 1 4000"}}]}
    ]
    worker_turns += [
        {"tool_calls": [{"name": "python", "input": {"code": BIG_PRINT}}]} for _ in range(6)
    ]
    worker_turns += [
        {
            "tool_calls": [
                {"name": "plan", "input": {"items": [{"text": "explore", "status": "done"}]}}
            ]
        },
        {"tool_calls": [{"name": "report", "input": {"text": "The biggest thing is 42."}}]},
    ]
    model = SnapshotModel(
        [
            {"tool_calls": [{"name": "bash", "input": {"command": "pwd"}}]},
            {
                "tool_calls": [
                    {
                        "name": "delegate",
                        "input": {"agent": "worker", "task": "Explore and find the biggest thing."},
                    }
                ]
            },
            *worker_turns,
            {"tool_calls": [{"name": "bash", "input": {"command": "pwd"}}]},
            {"tool_calls": [{"name": "report", "input": {"text": "main done"}}]},
        ]
    )
    stats, record = RunStats(), RunRecord(tmp_path / "run")
    context = RunContext(
        config=RunConfig(), model=model, sandbox=base_sandbox, record=record, stats=stats
    )
    main = ToolLoop(
        model,
        [BashTool(base_sandbox), DelegateTool(context), ReportTool()],
        "main",
        scope=context,
    )
    end = main.run("Do the task.")
    record.close()
    assert end.status == "reported" and end.message == "main done"

    calls = model.calls
    before, after = calls[1], calls[2 + len(worker_turns)]
    worker_calls = calls[2 : 2 + len(worker_turns)]
    assert all("report" in _tool_names(c) and "finish" not in _tool_names(c) for c in worker_calls)
    assert worker_calls[0]["messages"][0]["content"][0]["text"].startswith("<subtask>\nExplore")
    assert len(worker_calls[0]["messages"]) == 1  # fresh context: the subtask only
    explored = _size(worker_calls[-1])
    growth = _size(after) - _size(before)
    print(f"worker context reached {explored} chars; the main context grew by {growth} chars")
    assert explored > 120_000
    assert growth < 1_500
    after_text = json.dumps(after["messages"])
    assert "The biggest thing is 42." in after_text and "xxxxxxxxxx" not in after_text
    # The worker's `cd /tmp` happened in its own shell.
    assert "cwd: /home/user" in json.dumps(calls[-1]["messages"][-1]) and "/tmp]" not in json.dumps(
        calls[-1]["messages"][-1]
    )
    assert stats.delegations == 1 and stats.model_turns == len(calls)

    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    delegation = [e for e in events if e["event"] == "delegation"]
    assert len(delegation) == 1
    assert delegation[0]["agent"] == "main" and delegation[0]["specialist"] == "worker"
    assert delegation[0]["report"] == "The biggest thing is 42." and delegation[0]["turns"] == len(
        worker_turns
    )
    assert {e["agent"] for e in events if e["event"] == "model_turn"} == {"main", "worker-1"}


def test_worker_depth_two_allows_one_nested_worker_and_a_turn_cap_is_reported(base_sandbox):
    model = SnapshotModel(
        [
            {
                "tool_calls": [
                    {"name": "delegate", "input": {"agent": "worker", "task": "inner work"}}
                ]
            },
            {
                "text": "still looking",
                "tool_calls": [{"name": "bash", "input": {"command": "true"}}],
            },
            {"tool_calls": [{"name": "bash", "input": {"command": "true"}}]},
            {"tool_calls": [{"name": "report", "input": {"text": "outer done"}}]},
        ]
    )
    config = RunConfig()
    config.subagents.worker_depth = 2
    config.subagents.max_turns = 2
    stats = RunStats()
    result = DelegateTool(
        RunContext(config=config, model=model, sandbox=base_sandbox, stats=stats)
    )(agent="worker", task="outer work")
    outer, inner = model.calls[0], model.calls[1]
    assert "delegate" in _tool_names(outer) and "delegate" not in _tool_names(inner)
    outer_delegate = next(spec for spec in outer["tools"] if spec.name == "delegate")
    assert outer_delegate.input_schema["properties"]["agent"]["enum"] == ["worker"]
    # The inner worker hit its 2-turn cap: the outer worker got that said, with its last text.
    inner_report = json.dumps(model.calls[3]["messages"][-1])
    assert (
        "stopped without a report (turn_limit)" in inner_report and "still looking" in inner_report
    )
    assert result.output.startswith("Report from worker-1 (2 turns):\nouter done")
    assert stats.delegations == 2
