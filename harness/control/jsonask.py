"""Tool-less JSON requests: ask the model for one JSON value, parse it strictly, retry once with
the error.

Planner-style calls (task-state init, AND/OR expansion and repair, LSTC commitments) go through
here so every mode parses the same way and every call is counted and recorded.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from pathlib import Path

from harness.kernel.core import Model
from harness.kernel.loop import RunScope

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
RAW_RECORD_CHARS = 4000
FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
REPAIR = (
    "Your answer could not be used: {error}\nAnswer again with only the JSON value the "
    "instructions ask for, nothing before or after it."
)


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode()


def prompt(name: str) -> str:
    """A prompt file from `harness/prompts/`."""
    return (PROMPTS / name).read_text(encoding="utf-8")


def parse_json(text: str):
    """The JSON value in `text`: the whole text, a fenced block, or the outermost {...} or [...]."""
    text = (text or "").strip()
    candidates = [text, *FENCE.findall(text)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError(
        "the answer holds no valid JSON"
        + (f" (it began: {text[:80]!r})" if text else " (it was empty)")
    )


class JsonAsker:
    """Makes tool-less JSON requests for one run, counting usage in `stats` and recording each
    answer."""

    def __init__(
        self,
        model: Model,
        scope: RunScope | None = None,
        *,
        agent: str = "planner",
        retries: int = 1,
        main: bool = True,
    ):
        """`scope` holds the run's counters and record (None: the calls are neither counted nor
        recorded)."""
        self.model = model
        self.main = (
            main  # planner calls of a control mode are its main turns; a task-state init is not
        )
        self.stats = scope.stats if scope is not None else None
        self.record = scope.record if scope is not None else None
        self.agent = agent
        self.retries = retries
        self.calls = 0

    def ask(self, system: str, user: str, check: Callable, purpose: str, images: tuple = ()):
        """`check(parsed)` returns the usable value or raises ValueError; returns (value, error).
        `images` (PNG bytes) go before the text, for a question about the screen."""
        shown = [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": b64encode(png)},
            }
            for png in images
        ]
        messages = [{"role": "user", "content": [*shown, {"type": "text", "text": user}]}]
        error = "no answer"
        for attempt in range(self.retries + 1):
            reply = self.model.complete(system, messages, [])
            self.calls += 1
            self._count(reply.usage)
            text = reply.text
            try:
                value = check(parse_json(text))
                self._record(purpose, attempt, text, None)
                return value, None
            except (ValueError, TypeError, KeyError) as exc:
                error = str(exc) or type(exc).__name__
                self._record(purpose, attempt, text, error)
            messages += [
                {"role": "assistant", "content": [{"type": "text", "text": text or "(empty)"}]},
                {"role": "user", "content": [{"type": "text", "text": REPAIR.format(error=error)}]},
            ]
        return None, error

    def _count(self, usage) -> None:
        if self.stats is None:
            return
        self.stats.usage.add(usage)
        self.stats.model_turns += 1
        self.stats.main_turns += int(self.main)
        if self.stats.on_turn:
            self.stats.on_turn(self.stats)

    def _record(self, purpose: str, attempt: int, text: str, error: str | None) -> None:
        if self.record is not None:
            self.record.append(
                "json_request",
                agent=self.agent,
                purpose=purpose,
                attempt=attempt,
                answer=(text or "")[:RAW_RECORD_CHARS],
                error=error,
            )
