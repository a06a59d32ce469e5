"""Test models for the control modes: tool-less JSON requests answered by one callable, tool
requests by another (a `ScriptedModel` whose every turn is that callable)."""

from __future__ import annotations

import json

from harness.kernel.core import ModelReply, Usage
from harness.models.scripted import ScriptedModel


def user_text(messages: list[dict]) -> str:
    return "\n".join(
        b.get("text", "")
        for m in messages
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "text"
    )


class RoutedModel:
    """`planner(system, text) -> JSON-able or str` answers tool-less requests; `actor(system,
    messages, tools) -> turn dict` (or a list of turns, played in order) answers tool
    requests."""

    name = "routed"
    context_window = 200_000

    def __init__(self, planner, actor=None, turns: int = 400):
        self.planner = planner
        self.script = ScriptedModel(
            actor if isinstance(actor, list) else [actor] * turns if actor else []
        )
        self.planner_calls: list[dict] = []

    def complete(self, system, messages, tools):
        if tools:
            return self.script.complete(system, messages, tools)
        text = user_text(messages)
        answer = self.planner(system, text)
        self.planner_calls.append({"system": system, "text": text, "answer": answer})
        answer = answer if isinstance(answer, str) else json.dumps(answer)
        return ModelReply(
            [{"type": "text", "text": answer}], Usage(input_tokens=100, output_tokens=20)
        )


def bash(command: str, text: str = "") -> dict:
    turn = {"tool_calls": [{"name": "bash", "input": {"command": command}}]}
    return {**turn, "text": text} if text else turn


def call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


def assistant_turns(messages: list[dict]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")
