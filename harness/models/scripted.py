"""Models that need no provider: a scripted conversation (tests, demos) and a replay of a
recorded run.

A script turn is a dict `{"text": str?, "tool_calls": [{"name", "input", "id"?}], "usage":
{...}?, "stop_reason": str?}` or, in Python, a callable `(system, messages, tools) -> turn dict`
that can react to earlier tool results. Script files are JSON (a list of turns, or `{"turns":
[...]}`) or JSONL.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.kernel.context import compaction_prompt
from harness.kernel.core import BudgetExceeded, ModelReply, StateActError, ToolSpec, Usage

Turn = dict | Callable[[str, list[dict], list[ToolSpec]], dict]
DEFAULT_CONTEXT_WINDOW = 200_000


def estimate_tokens(system: str, messages: list[dict]) -> int:
    """A rough prompt size (a quarter of the JSON length), enough to exercise context management."""
    return (len(system) + len(json.dumps(messages, default=str))) // 4


def _check_turn(turn: Any, where: str) -> dict:
    """The turn itself, or StateActError saying what is wrong with it."""
    if not isinstance(turn, dict):
        raise StateActError(f"{where} is not an object with text and/or tool_calls")
    unknown = set(turn) - {"text", "tool_calls", "usage", "stop_reason"}
    if unknown:
        raise StateActError(f"{where} has unknown key(s) {sorted(unknown)}")
    if "text" in turn and not isinstance(turn["text"], str):
        raise StateActError(f"{where}: text must be a string")
    calls = turn.get("tool_calls", [])
    if not isinstance(calls, list):
        raise StateActError(f"{where}: tool_calls must be a list")
    for n, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise StateActError(f"{where}: tool call {n} needs a string name")
        if not isinstance(call.get("input", {}), dict):
            raise StateActError(f"{where}: tool call {n} input must be an object")
    if not isinstance(turn.get("usage", {}), dict):
        raise StateActError(f"{where}: usage must be an object")
    return turn


def load_script(path: str | Path) -> list[dict]:
    """Turns from a JSON or JSONL script file; StateActError if it is missing or malformed."""
    path = Path(path)
    if not path.is_file():
        raise StateActError(f"script file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise StateActError(f"script file {path} is neither JSON nor JSONL: {exc}") from None
    if isinstance(data, dict) and "turns" in data:
        data = data["turns"]
    elif isinstance(data, dict):
        data = [data]  # a JSONL file with a single line
    if not isinstance(data, list) or not data:
        raise StateActError(f"script file {path} holds no turns (expected a list of turn objects)")
    return [_check_turn(turn, f"turn {n} of {path}") for n, turn in enumerate(data)]


def _refusal_note(messages: list[dict]) -> str:
    """`; its last call was refused: …` when the script ended right after a tool error (a finish
    the harness refused, say), so the run's error says why the script was not enough."""
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    errors = [
        block
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")
    ]
    if not errors:
        return ""
    inner = errors[-1].get("content")
    if isinstance(inner, list):
        inner = " ".join(b.get("text", "") for b in inner if isinstance(b, dict))
    return f"; its last call was refused: {str(inner or '').strip()[:300]}"


class ScriptedModel:
    """Plays scripted turns in order; raises BudgetExceeded("script_exhausted") after the last."""

    def __init__(
        self, turns: list[Turn], name: str = "script", context_window: int = DEFAULT_CONTEXT_WINDOW
    ):
        self.turns = list(turns)
        self.name = name
        self.context_window = context_window
        self.position = 0
        self.calls: list[dict] = []
        """What each call received (system, messages, tools), for tests to inspect."""

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        return cls(load_script(path), name=f"script/{Path(path).name}")

    def complete(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> ModelReply:
        if system == compaction_prompt():  # a script has no turns for compaction summaries
            return _extractive_summary(system, messages)
        self.position = continued_position(self.position, messages, len(self.turns))
        if self.position >= len(self.turns):
            raise BudgetExceeded(
                "script_exhausted",
                f"the script has no turn left after {len(self.turns)} turns"
                + _refusal_note(messages),
            )
        index = self.position
        self.position += 1
        self.calls.append({"system": system, "messages": messages, "tools": tools})
        turn = self.turns[index]
        if callable(turn):
            turn = turn(system, messages, tools)
        turn = _check_turn(turn, f"script turn {index}")
        content: list[dict] = []
        if turn.get("text"):
            content.append({"type": "text", "text": turn["text"]})
        for n, call in enumerate(turn.get("tool_calls", [])):
            content.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_script_{index}_{n}",
                    "name": call["name"],
                    "input": dict(call.get("input", {})),
                }
            )
        raw = turn.get("usage", {})
        usage = Usage(
            input_tokens=int(raw.get("input_tokens", estimate_tokens(system, messages))),
            output_tokens=int(raw.get("output_tokens", len(json.dumps(content)) // 4)),
            cache_read_tokens=int(raw.get("cache_read_tokens", 0)),
            cache_write_tokens=int(raw.get("cache_write_tokens", 0)),
            cost_usd=float(raw.get("cost_usd", 0.0)),
        )
        stop = turn.get("stop_reason") or ("tool_use" if turn.get("tool_calls") else "end_turn")
        return ModelReply(content=content, usage=usage, stop_reason=stop)

    def count_tokens(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> int | None:
        return estimate_tokens(system, messages)


def continued_position(position: int, messages: list[dict], length: int) -> int:
    """Where a script goes on: a first request whose history already holds assistant turns (a
    resumed run) continues after them rather than replaying them."""
    if position:
        return position
    return min(length, sum(1 for message in messages if message["role"] == "assistant"))


def _extractive_summary(system: str, messages: list[dict]) -> ModelReply:
    """A script has no turns for compaction summaries, so it answers with the last lines of the
    transcript: deterministic, and it keeps the script in step."""
    lines = []
    for message in messages:
        for block in message["content"]:
            if block.get("type") == "text" and block["text"].strip():
                lines += [line[:200] for line in block["text"].splitlines() if line.strip()]
    text = "\n".join(f"- {line}" for line in lines[-40:]) or "- (nothing to summarize)"
    usage = Usage(input_tokens=estimate_tokens(system, messages), output_tokens=len(text) // 4)
    return ModelReply(content=[{"type": "text", "text": text}], usage=usage, stop_reason="end_turn")


class ReplayModel:
    """Returns the assistant turns recorded in `run_dir/trajectory.jsonl`, in order, ids preserved.

    Token counts are the recorded ones (so context management behaves as in the run); the cost is
    zero.
    """

    def __init__(self, run_dir: str | Path, context_window: int = DEFAULT_CONTEXT_WINDOW):
        self.run_dir = Path(run_dir)
        self.name = f"replay/{self.run_dir.name}"
        self.context_window = context_window
        self.turns = self._load()
        self.position = 0

    def _load(self) -> list[dict]:
        path = self.run_dir / "trajectory.jsonl"
        if not path.is_file():
            raise StateActError(f"{self.run_dir} is not a run directory (no trajectory.jsonl)")
        turns = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise StateActError(f"{path} line {number} is not valid JSON") from None
            if isinstance(record, dict) and record.get("event") == "model_turn":
                if not isinstance(record.get("content"), list):
                    raise StateActError(
                        f"{path} line {number}: a model_turn record needs a content list"
                    )
                turns.append(record)
        if not turns:
            raise StateActError(f"{path} records no model turns to replay")
        return turns

    def _restore_image(self, block: dict) -> dict:
        if block.get("type") != "image" or "source" in block or "file" not in block:
            return block
        image_path = self.run_dir / block["file"]
        if not image_path.is_file():
            raise StateActError(f"recorded image {image_path} is missing")
        data = base64.b64encode(image_path.read_bytes()).decode("ascii")
        media = "image/jpeg" if image_path.suffix.lower() in (".jpg", ".jpeg") else "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}

    def complete(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> ModelReply:
        self.position = continued_position(self.position, messages, len(self.turns))
        if self.position >= len(self.turns):
            raise BudgetExceeded(
                "script_exhausted",
                f"the recorded run has no model turn left after {len(self.turns)}",
            )
        record = self.turns[self.position]
        self.position += 1
        content = [self._restore_image(dict(block)) for block in record["content"]]
        raw = record.get("usage") or {}
        usage = Usage(
            input_tokens=int(raw.get("input_tokens", 0)),
            output_tokens=int(raw.get("output_tokens", 0)),
            cache_read_tokens=int(
                raw.get("cache_read_tokens", raw.get("cache_read_input_tokens", 0))
            ),
            cache_write_tokens=int(
                raw.get("cache_write_tokens", raw.get("cache_creation_input_tokens", 0))
            ),
        )  # no cost: replaying spends nothing
        has_calls = any(b.get("type") == "tool_use" for b in content)
        stop = record.get("stop_reason") or ("tool_use" if has_calls else "end_turn")
        return ModelReply(content=content, usage=usage, stop_reason=stop)
