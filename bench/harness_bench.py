"""Harness overhead per turn: everything the loop does except the model call and the tool itself
(history, budget and compaction checks, a plan note, the run record flushed to disk); and the
command line's start (`stateact suite --help`, which builds every subcommand's parser) beside a
bare interpreter's."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from harness.kernel.core import ModelReply, ToolResult, ToolSpec, Usage
from harness.kernel.loop import LoopConfig, NoteHook, RunScope, ToolLoop
from harness.kernel.records import RunRecord
from harness.tools.finish import FinishTool

from . import Row, median_time, row

TURNS = 150


class NoopTool:
    name = "noop"

    def spec(self) -> ToolSpec:
        return ToolSpec(
            "noop", "does nothing", {"type": "object", "properties": {"text": {"type": "string"}}}
        )

    def __call__(self, text: str = "") -> ToolResult:
        return ToolResult(output=text)


class TimedScript:
    """A scripted model that answers instantly and keeps the time spent inside `complete`."""

    context_window = 200_000
    name = "bench"

    def __init__(self, turns: int):
        self.left = turns
        self.spent = 0.0
        self.usage = Usage(input_tokens=1000, output_tokens=50)

    def complete(self, system, messages, tools) -> ModelReply:
        started = time.perf_counter()
        self.left -= 1
        call = {
            "type": "tool_use",
            "id": f"t{self.left}",
            "name": "noop" if self.left else "finish",
            "input": {"text": "x" * 400} if self.left else {"summary": "done"},
        }
        reply = ModelReply(content=[{"type": "text", "text": "next"}, call], usage=self.usage)
        self.spent += time.perf_counter() - started
        return reply


def _overhead(with_record: bool) -> float:
    model = TimedScript(TURNS)
    with tempfile.TemporaryDirectory() as folder:
        record = RunRecord(folder) if with_record else None
        loop = ToolLoop(
            model,
            [NoopTool(), FinishTool(lambda: 99)],
            "system",
            scope=RunScope(record=record),
            config=LoopConfig(max_turns=TURNS + 1),
            hooks=[NoteHook(lambda: "<plan>\n[ ] x\n</plan>")],
        )
        started = time.perf_counter()
        loop.run("task")
        total = time.perf_counter() - started
        if record:
            record.close()
    return (total - model.spent) / TURNS


def _plain_loop() -> float:
    """The plainest loop: call, append, run the tool, append; no record, no checks."""
    model, tool, messages = TimedScript(TURNS), NoopTool(), [{"role": "user", "content": "task"}]
    started = time.perf_counter()
    for _ in range(TURNS):
        reply = model.complete("system", messages, [])
        messages.append({"role": "assistant", "content": reply.content})
        call = reply.tool_uses[0]
        output = tool(**call["input"]).output if call["name"] == "noop" else ""
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": output}],
            }
        )
    return (time.perf_counter() - started - model.spent) / TURNS


CLI_RUNS = 5


def _cli_start() -> Row:
    def command(*args: str):
        return lambda: subprocess.run([sys.executable, *args], capture_output=True, check=True)

    ours = median_time(command("-m", "harness.cli", "suite", "--help"), CLI_RUNS)
    bare = median_time(command("-c", "pass"), CLI_RUNS)
    return row(
        "command line start (stateact suite --help)",
        ours,
        CLI_RUNS,
        "python -c pass",
        bare,
        note="was 9 s under load before the lazy NLTK/pandas/anthropic imports",
    )


def rows() -> list[Row]:
    repeats = 5
    ours = sorted(_overhead(True) for _ in range(repeats))[repeats // 2]
    plain = sorted(_plain_loop() for _ in range(repeats))[repeats // 2]
    return [
        row(
            "harness overhead per turn (scripted model, no-op tool, record on disk)",
            ours,
            repeats * TURNS,
            "bare call/append loop without record or checks",
            plain,
            note="target < 20 ms",
        ),
        _cli_start(),
    ]
