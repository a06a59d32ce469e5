"""A chat model as a judge that answers one system + user message with text (WebArena's
`fuzzy_match` and unachievable-task checks: `tasks/webarena/evaluators.py`'s `Judge`).

`judge_model(spec, options)` builds it as WebArena calls its judge: temperature 0 and no extended
thinking (an anthropic/ judge: no thinking and no temperature, which that API refuses). What the
judge's calls cost is tallied per task: the runner scores a task inside `counting_judge_usage()`,
and every call made in that context adds its usage there (a suite's parallel tasks each have their
own context, so one shared judge never mixes their costs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from harness.kernel.core import Model, StateActError, Usage

from . import make_model
from .config import ModelConfig

JUDGE_TEMPERATURE = 0.0
"""WebArena's `llm_fuzzy_match` / `llm_ua_match` call their model at temperature 0."""

_task_tally: ContextVar[Usage | None] = ContextVar("judge_usage", default=None)


@contextmanager
def counting_judge_usage() -> Iterator[Usage]:
    """A fresh `Usage` that every judge call made inside the block adds to."""
    usage = Usage()
    token = _task_tally.set(usage)
    try:
        yield usage
    finally:
        _task_tally.reset(token)


class ModelJudge:
    """`complete(system, user)` over any StateAct model (no tools; the reply's text)."""

    def __init__(self, model: Model):
        self.model = model
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        messages = [{"role": "user", "content": [{"type": "text", "text": user}]}]
        reply = self.model.complete(system, messages, [])
        self.calls += 1
        tally = _task_tally.get()
        if tally is not None:
            tally.add(reply.usage)
        text = "".join(b.get("text", "") for b in reply.content if b.get("type") == "text")
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
