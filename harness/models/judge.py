"""A chat model as a judge that answers one system + user message with text (WebArena's
`fuzzy_match` and unachievable-task checks: `tasks/webarena/evaluators.py`'s `Judge`)."""

from __future__ import annotations

from harness.kernel.core import Model, StateActError


class ModelJudge:
    """`complete(system, user)` over any StateAct model (no tools; the reply's text)."""

    def __init__(self, model: Model):
        self.model = model
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        messages = [{"role": "user", "content": [{"type": "text", "text": user}]}]
        reply = self.model.complete(system, messages, [])
        self.calls += 1
        text = "".join(b.get("text", "") for b in reply.content if b.get("type") == "text")
        if not text.strip():
            raise StateActError("the judge model answered no text")
        return text
