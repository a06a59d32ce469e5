"""The tool loop in milliseconds, without Docker: a scripted model, the real tools and an in-memory
sandbox. Hooks at named points, error results the model can act on, budgets, and replies cut at the
output limit (also through the real Anthropic SDK against the fake server)."""

from __future__ import annotations

import pytest

from harness.control.main_agent import MainAgent
from harness.kernel.core import Finished
from harness.kernel.loop import (
    CUT_CALL,
    CUT_NUDGE,
    LoopConfig,
    LoopHook,
    NoteHook,
    RunScope,
    ToolLoop,
)
from harness.kernel.records import RunRecord, load_events
from harness.models import ModelConfig
from harness.models.anthropic_model import AnthropicModel
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.run.context import RunContext
from harness.tools import BashTool, EditorTool, FinishTool
from sandboxes import Sandbox
from tests.fakes import FakeAnthropicServer
from tests.fakes.memory_sandbox import MemorySandbox


def bash(command: str, **extra) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}], **extra}


def finish(summary: str = "done") -> dict:
    return {"tool_calls": [{"name": "finish", "input": {"summary": summary}}]}


def loop_over(
    sandbox, turns, hooks=(), record=None, max_turns=20
) -> tuple[ToolLoop, ScriptedModel]:
    model = ScriptedModel(turns)
    tools = [BashTool(sandbox), EditorTool(sandbox), FinishTool(lambda: 99)]
    loop = ToolLoop(
        model,
        tools,
        "system",
        config=LoopConfig(max_turns=max_turns),
        scope=RunScope(record=record),
        hooks=hooks,
    )
    return loop, model


def result_texts(message: dict) -> list[str]:
    return [b["content"][0]["text"] for b in message["content"] if b["type"] == "tool_result"]


def test_the_memory_sandbox_is_a_sandbox():
    assert isinstance(MemorySandbox(), Sandbox)


def test_a_bash_call_goes_to_the_sandbox_and_its_result_back_to_the_model(tmp_path):
    sandbox = MemorySandbox()
    record = RunRecord(tmp_path)
    loop, model = loop_over(
        sandbox, [bash("echo hi > a.txt"), bash("cat a.txt"), finish()], [], record
    )
    end = loop.run("Write hi into a.txt.")
    assert isinstance(end, Finished) and end.status == "completed"
    assert sandbox.files == {"/home/user/a.txt": "hi\n"}
    assert result_texts(loop.messages[4]) == ["hi\n[exit code: 0, cwd: /home/user]"]
    assert loop.messages[4] in model.calls[2]["messages"]  # what the model saw next
    record.close()
    events = [e["event"] for e in load_events(tmp_path)]
    assert events == ["task", *["model_turn", "tool_results"] * 3, "end"]


def test_problems_come_back_as_errors_the_model_can_act_on():
    sandbox = MemorySandbox()
    turns = [
        {"tool_calls": [{"name": "shell", "input": {"command": "ls"}}]},
        {"tool_calls": [{"name": "bash", "input": {"cmd": "ls"}}]},
        bash("nosuchcommand"),
        {
            "tool_calls": [
                {"name": "str_replace_based_edit_tool", "input": {"command": "view", "path": "/x"}}
            ]
        },
        finish(),
    ]
    loop, _ = loop_over(sandbox, turns)
    loop.run("Try things.")
    errors = [loop.messages[n]["content"][0] for n in (2, 4, 8)]
    assert all(block["is_error"] for block in errors)
    assert "Unknown tool 'shell'; the tools are: bash," in errors[0]["content"][0]["text"]
    assert "Bad arguments for bash" in errors[1]["content"][0]["text"]
    assert "/x does not exist" in errors[2]["content"][0]["text"]
    assert result_texts(loop.messages[6]) == [
        "bash: nosuchcommand: command not found\n[exit code: 127, cwd: /home/user]"
    ]


class Recorder(LoopHook):
    """Logs the named points it is called at; its note names the turn the loop is on."""

    def __init__(self):
        self.points: list[tuple[str, int]] = []

    def before_request(self, loop):
        self.points.append(("before_request", loop.turns))

    def note(self, loop):
        return f"<turn>{loop.turns}</turn>"

    def after_tool_results(self, loop):
        self.points.append(("after_tool_results", loop.turns))


def test_hooks_run_at_their_points_and_notes_ride_on_the_newest_user_turn_only():
    hook = Recorder()
    loop, model = loop_over(MemorySandbox(), [bash("pwd"), {"text": "thinking"}, finish()], [hook])
    loop.run("Task.")
    assert hook.points == [
        ("before_request", 0),
        ("after_tool_results", 1),
        ("before_request", 1),
        ("after_tool_results", 2),  # the no-tool nudge counts as the turn's results
        ("before_request", 2),
    ]  # not after the finishing turn: the loop has ended
    second = model.calls[1]["messages"]
    assert second[-1]["content"][-1] == {"type": "text", "text": "<turn>1</turn>"}
    assert second[0] == loop.messages[0]  # earlier turns are sent unchanged (prompt cache)
    # Building a request is pure: it may happen any number of times without acting.
    before = list(hook.points)
    loop.request_messages()
    loop.request_messages()
    assert hook.points == before


def test_a_hook_may_end_the_loop_after_tool_results():
    class Stop(LoopHook):
        def after_tool_results(self, loop):
            if loop.turns == 2:
                raise Finished("stalled", "the run stalled")

    loop, _ = loop_over(MemorySandbox(), [bash("pwd"), bash("pwd"), bash("pwd")], [Stop()])
    end = loop.run("Task.")
    assert (end.status, end.message, loop.turns) == ("stalled", "the run stalled", 2)


def test_the_turn_budget_ends_the_loop():
    loop, _ = loop_over(MemorySandbox(), [bash("pwd")] * 5, max_turns=3)
    end = loop.run("Task.")
    assert end.status == "turn_limit" and loop.turns == 3


def test_calls_after_the_finishing_call_are_not_run():
    sandbox = MemorySandbox()
    turn = {
        "tool_calls": [
            {"name": "finish", "input": {"summary": "done"}},
            {"name": "bash", "input": {"command": "echo late > late.txt"}},
        ]
    }
    loop, _ = loop_over(sandbox, [turn])
    assert loop.run("Task.").status == "completed"
    assert result_texts(loop.messages[-1])[1] == "Not run: the task already ended."
    assert sandbox.files == {}


def test_a_reply_cut_at_max_tokens_is_continued_and_a_cut_call_is_not_run(tmp_path):
    sandbox = MemorySandbox()
    record = RunRecord(tmp_path)
    turns = [
        {"text": "Here is my long pla", "stop_reason": "max_tokens"},
        bash("echo half > big.txt", stop_reason="max_tokens"),
        bash("echo whole > big.txt"),
        finish(),
    ]
    loop, _ = loop_over(sandbox, turns, record=record)
    assert loop.run("Write big.txt.").status == "completed"
    assert loop.messages[2]["content"] == [{"type": "text", "text": CUT_NUDGE}]
    assert loop.messages[4]["content"][0]["is_error"]
    assert result_texts(loop.messages[4]) == [CUT_CALL]
    assert sandbox.files == {"/home/user/big.txt": "whole\n"}  # only the complete call ran
    record.close()
    cuts = [e for e in load_events(tmp_path) if e["event"] == "output_cut"]
    assert [(e["turn"], e["in_a_row"]) for e in cuts] == [(1, 1), (2, 2)]


def test_replies_cut_again_and_again_end_the_loop_with_a_reason():
    cut = {"text": "Let me expl", "stop_reason": "max_tokens"}
    loop, _ = loop_over(MemorySandbox(), [cut, cut, cut, finish()])
    end = loop.run("Task.")
    assert end.status == "output_limit"
    assert "cut at the output limit (max_tokens) 3 times in a row" in end.message


def test_a_cut_reply_from_the_anthropic_api_is_continued():
    replies = [
        {
            "tool_calls": [{"name": "bash", "input": {"command": "echo par"}}],
            "stop_reason": "max_tokens",
        },
        {"tool_calls": [{"name": "bash", "input": {"command": "echo done > out.txt"}}]},
        {"tool_calls": [{"name": "finish", "input": {"summary": "written"}}]},
    ]
    sandbox = MemorySandbox()
    with FakeAnthropicServer(replies) as server:
        model = AnthropicModel(
            "claude-sonnet-4-5", ModelConfig(base_url=server.base_url, api_key="test-key")
        )
        tools = [BashTool(sandbox), FinishTool(lambda: 99)]
        end = ToolLoop(model, tools, "system").run("Write out.txt.")
        sent = server.requests[1]["json"]["messages"][-1]["content"][0]
    assert end.status == "completed"
    assert sent["type"] == "tool_result" and sent["is_error"] is True
    assert "cut off at the output limit" in sent["content"][0]["text"]
    assert sandbox.files == {"/home/user/out.txt": "done\n"}


def test_the_main_agent_runs_over_the_memory_sandbox():
    sandbox = MemorySandbox()
    config = RunConfig(model="script/test")
    config.subagents.enabled = []
    turns = [
        finish("too early"),
        {
            "tool_calls": [
                {"name": "plan", "input": {"items": [{"text": "write", "status": "doing"}]}}
            ]
        },
        bash("echo a > a.txt"),
        bash("cat a.txt"),
        bash("ls"),
        finish(),
    ]
    model = ScriptedModel(turns)
    agent = MainAgent(RunContext(config=config, model=model, sandbox=sandbox))
    end = agent.run("Write a.")
    assert end.status == "completed" and agent.steps_taken() == 3
    assert "at least" in loop_text(agent.loop.messages[2])  # finishing needs three steps first
    assert "<plan>" in model.calls[2]["messages"][-1]["content"][-1]["text"]


def loop_text(message: dict) -> str:
    return message["content"][0]["content"][0]["text"]


@pytest.mark.parametrize("hook", [NoteHook(lambda: ""), NoteHook(lambda: "x")])
def test_a_note_hook_only_adds_text(hook):
    loop, _ = loop_over(MemorySandbox(), [finish()], [hook])
    loop.messages.append({"role": "user", "content": [{"type": "text", "text": "t"}]})
    sent = loop.request_messages()
    assert len(sent[-1]["content"]) == (2 if hook.render() else 1)
