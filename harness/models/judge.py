"""A chat model as a judge that answers one system + user message with text (WebArena's
`fuzzy_match` and unachievable-task checks: `tasks/webarena/evaluators.py`'s `Judge`).

`judge_model(spec, options)` builds it as WebArena calls its judge: temperature 0 and no extended
thinking (an anthropic/ judge: no thinking and no temperature, which that API refuses). What the
judge's calls are tallied per task: the runner scores a task inside `counting_judge_usage()`, and
every call made in that context adds its usage and its exchange (what the judge read, what it
answered) there, for the run's cost and its trajectory (a suite's parallel tasks each have their
own context, so one shared judge never mixes their calls)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from harness.kernel.core import Model, StateActError, Usage

from . import make_model
from .config import ModelConfig

JUDGE_TEMPERATURE = 0.0
"""WebArena's `llm_fuzzy_match` / `llm_ua_match` call their model at temperature 0."""


@dataclass
class JudgeTally:
    """One task's judge calls: their summed usage, and each exchange as the trajectory has it."""

    usage: Usage = field(default_factory=Usage)
    calls: list[dict] = field(default_factory=list)

    def note(self, model: str, system: str, user: str, reply) -> None:
        answer = None if reply is None else _text(reply)
        usage = None if reply is None else reply.usage
        if usage is not None:
            self.usage.add(usage)
        self.calls.append(
            {
                "model": model,
                "system": system,
                "user": user,
                "answer": answer,
                "input_tokens": usage.prompt_tokens if usage else 0,
                "output_tokens": usage.output_tokens if usage else 0,
                "cost_usd": round(usage.cost_usd, 6) if usage and usage.priced else None,
            }
        )


_task_tally: ContextVar[JudgeTally | None] = ContextVar("judge_tally", default=None)


@contextmanager
def counting_judge_usage() -> Iterator[JudgeTally]:
    """A fresh tally that every judge call made inside the block adds to."""
    tally = JudgeTally()
    token = _task_tally.set(tally)
    try:
        yield tally
    finally:
        _task_tally.reset(token)


def _text(reply) -> str:
    return "".join(b.get("text", "") for b in reply.content if b.get("type") == "text")


class ModelJudge:
    """`complete(system, user)` over any StateAct model (no tools; the reply's text)."""

    def __init__(self, model: Model):
        self.model = model
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        messages = [{"role": "user", "content": [{"type": "text", "text": user}]}]
        tally = _task_tally.get()
        reply = None
        try:
            reply = self.model.complete(system, messages, [])
        finally:  # a failed call is recorded too, with no answer
            self.calls += 1
            if tally is not None:
                tally.note(getattr(self.model, "name", "?"), system, user, reply)
        text = _text(reply)
        if not text.strip():
            raise StateActError("the judge model answered no text")
        return text


def judge_options(options: ModelConfig, provider: str) -> ModelConfig:
    """The run's model settings as the judge is called with them: no thinking, and temperature 0
    where the provider takes one (Anthropic's Messages API refuses every sampling temperature, so
    an anthropic/ judge is called without one)."""
    temperature = None if provider == "anthropic" else JUDGE_TEMPERATURE
    return options.model_copy(
        update={"temperature": temperature, "thinking_budget": None, "adaptive_thinking": False}
    )


def judge_model(spec: str, options: ModelConfig | None = None) -> ModelJudge:
    """The `--judge-model` judge, called as close to WebArena's judge as its API allows."""
    provider = (spec or "").partition("/")[0].strip().lower()
    return ModelJudge(make_model(spec, judge_options(options or ModelConfig(), provider)))
