"""The few seams of StateAct: what a model, a tool and an agent look like, and the control-flow
exceptions.

Messages use one canonical form everywhere (the Anthropic Messages shape, as plain dicts), so the
history an agent keeps *is* its trajectory:

    {"role": "user" | "assistant", "content": [block, ...]}

with blocks
    {"type": "text", "text": str}
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": str}}
    {"type": "tool_use", "id": str, "name": str, "input": dict}
    {"type": "tool_result", "tool_use_id": str, "content": [text/image blocks], "is_error": bool}

Model clients translate this form to and from their provider's wire format.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolResult:
    """What one tool call produced: text output, an error the model can act on, and/or a PNG
    image."""

    output: str = ""
    error: str | None = None
    image_png: bytes | None = None

    def to_blocks(self) -> list[dict]:
        """The content of the `tool_result` block this result becomes."""
        blocks: list[dict] = []
        text = self.error if self.error is not None else self.output
        if text or self.image_png is None:
            blocks.append({"type": "text", "text": text or "(no output)"})
        if self.image_png is not None:
            blocks.append(image_block(self.image_png))
        return blocks


def image_block(png: bytes) -> dict:
    """A canonical image content block holding a PNG."""
    data = base64.b64encode(png).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


@dataclass(frozen=True)
class ToolSpec:
    """How a tool is described to a model.

    `native_type` names a provider-defined tool type (for example Anthropic's `bash_20250124`); a
    client that supports it for the model in use sends that instead of the JSON schema.
    `native_params` go with it (such as `display_width_px` for the computer tool).
    """

    name: str
    description: str
    input_schema: dict
    native_type: str | None = None
    native_params: dict = field(default_factory=dict)


@dataclass
class Usage:
    """Token counts of one or more model calls, and what they cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True
    """False once any call was made to a model without a known price: `cost_usd` then counts only
    the priced calls, and the run's cost is recorded as unknown."""

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd
        self.priced = self.priced and other.priced

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read in the call: fresh, cached and cache-written input."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass
class ModelReply:
    """One assistant turn: its content blocks (canonical form), why it stopped, and its usage."""

    content: list[dict]
    usage: Usage
    stop_reason: str = "end_turn"

    @property
    def tool_uses(self) -> list[dict]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")


@runtime_checkable
class Model(Protocol):
    """A chat model that can call tools."""

    name: str
    context_window: int

    def complete(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> ModelReply: ...


@runtime_checkable
class Tool(Protocol):
    """One tool the model may call. Raise `ToolError` for a problem the model should see and fix."""

    name: str

    def spec(self) -> ToolSpec: ...

    def __call__(self, **params: Any) -> ToolResult: ...


class StateActError(Exception):
    """An error with a one-sentence message meant for the user (printed without a traceback)."""


def require_one_of(what: str, value, choices, error: type[Exception] | None = None):
    """`value` when it is one of `choices`; otherwise `error` (StateActError) naming the choices."""
    if value not in choices:
        raise (error or StateActError)(
            f"unknown {what} {value!r}; choose one of: {', '.join(choices)}."
        )
    return value


class ToolError(Exception):
    """A tool call that could not be carried out; its message goes back to the model as an error
    result."""


class Finished(Exception):
    """Raised by a tool that ends the agent's loop (finish accepted, report given)."""

    def __init__(self, status: str, message: str = ""):
        super().__init__(message or status)
        self.status = status
        self.message = message


class BudgetExceeded(Exception):
    """Raised when a turn, cost or time budget runs out; `status` names which."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message
