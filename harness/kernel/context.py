"""Context compaction: near the context limit, summarize the oldest prefix at an assistant boundary.

The first user message (the task instruction) is kept verbatim, the summary of earlier work rides
with it, images are stripped from what is summarized, and the most recent turns stay as they
were. The plan lives outside the history (see `harness.tools.plan`), so compaction never loses
it.
"""

from __future__ import annotations

import json
import logging
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.core import Usage
from harness.kernel.loop import LoopHook

log = logging.getLogger(__name__)

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
IMAGE_TOKENS = 1600
SUMMARY_INPUT_CHARS = 200_000
TOOL_TEXT_CHARS = 4000


class CompactionConfig(BaseModel):
    """When and how much to compact."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Compact at all (the `no-sustain` ablation turns this off)."""
    trigger_share: float = Field(0.7, gt=0, le=1)
    """Compact when a request would exceed this share of the model's context window."""
    keep_share: float = Field(0.2, ge=0, lt=1)
    """Keep roughly this share of the window as verbatim recent turns."""


def estimate_tokens(value) -> int:
    """A rough token count (4 characters a token; images at a flat rate)."""
    if isinstance(value, dict):
        if value.get("type") == "image":
            return IMAGE_TOKENS
        return sum(estimate_tokens(item) for key, item in value.items() if key != "source")
    if isinstance(value, list):
        return sum(estimate_tokens(item) for item in value)
    return len(str(value)) // 4 + 1


@cache
def compaction_prompt() -> str:
    """The system prompt of a compaction request (a scripted model answers it without a turn)."""
    return (PROMPTS / "compaction.md").read_text()


class Compactor(LoopHook):
    """Decides when a loop's history is too long and replaces its oldest part with a summary."""

    def __init__(self, model, config: CompactionConfig | None = None, stats=None):
        self.model = model
        self.config = config or CompactionConfig()
        self.stats = stats
        self.summary_prompt = compaction_prompt()
        self.compactions = 0

    def before_request(self, loop) -> None:
        if self.needed(loop):
            self.compact(loop)

    @property
    def limit(self) -> int:
        return int(self.model.context_window * self.config.trigger_share)

    def needed(self, loop) -> bool:
        if not self.config.enabled or len(loop.messages) < 4:
            return False
        # The provider counted the last request; what came after it is estimated.
        since_last = estimate_tokens(loop.messages[-2:])
        projected = max(loop.last_prompt_tokens + since_last, estimate_tokens(loop.messages))
        count_tokens = getattr(self.model, "count_tokens", None)
        if projected > self.limit * 0.85 and count_tokens is not None:
            # Near the line, ask the provider's (free) counting endpoint instead of guessing.
            counted = count_tokens(loop.system, loop.request_messages(), loop.specs)
            if counted is not None:
                return counted > self.limit
        return projected > self.limit

    def compact(self, loop) -> None:
        messages = loop.messages
        split = self._split_index(messages)
        if split is None:
            return
        prefix = messages[1:split]
        summary, usage = self._summarize(messages[0], prefix)
        if self.stats is not None:
            self.stats.usage.add(usage)
        first = {
            "role": "user",
            "content": [*_instruction_blocks(messages[0]), _summary_block(summary)],
        }
        loop.messages = [first, *messages[split:]]
        loop.last_prompt_tokens = estimate_tokens(loop.messages)
        self.compactions += 1
        if loop.record:
            loop.record.append(
                "compaction",
                agent=loop.agent,
                replaced_messages=split - 1,
                kept_messages=len(messages) - split,
                summary=summary,
                usage=vars(usage),
            )
        log.info("compacted %d messages of %s into a summary", split - 1, loop.agent)

    def _split_index(self, messages: list[dict]) -> int | None:
        """Where the kept tail starts: an assistant message, leaving at most `keep_share` of the
        window."""
        keep_budget = int(self.model.context_window * self.config.keep_share)
        kept, split = 0, None
        for index in range(len(messages) - 1, 1, -1):
            kept += estimate_tokens(messages[index])
            if messages[index]["role"] == "assistant":
                if kept > keep_budget and split is not None:
                    break
                split = index
        return split if split is not None and split > 1 else None

    def _summarize(self, first: dict, prefix: list[dict]) -> tuple[str, Usage]:
        transcript = _render_for_summary([first, *prefix])
        request = [{"role": "user", "content": [{"type": "text", "text": transcript}]}]
        reply = self.model.complete(self.summary_prompt, request, [])
        return reply.text.strip() or "(the summarizer returned nothing)", reply.usage


def _instruction_blocks(first: dict) -> list[dict]:
    return [
        block for block in first["content"] if not block.get("text", "").startswith("<earlier-work")
    ]


def _summary_block(summary: str) -> dict:
    return {"type": "text", "text": f"<earlier-work-summary>\n{summary}\n</earlier-work-summary>"}


def _render_for_summary(messages: list[dict]) -> str:
    """The prefix as plain text, images stripped and long tool outputs shortened."""
    parts = []
    for message in messages:
        for block in message["content"]:
            kind = block.get("type")
            if kind == "text":
                parts.append(f"[{message['role']}] {block['text']}")
            elif kind == "tool_use":
                parts.append(
                    f"[tool call {block.get('name')}] "
                    f"{json.dumps(block.get('input'))[:TOOL_TEXT_CHARS]}"
                )
            elif kind == "tool_result":
                texts = [
                    b.get("text", "") for b in block.get("content", []) if b.get("type") == "text"
                ]
                text = "\n".join(texts)
                if len(text) > TOOL_TEXT_CHARS:
                    half = TOOL_TEXT_CHARS // 2
                    text = (
                        f"{text[:half]}\n[... {len(text) - TOOL_TEXT_CHARS} characters "
                        f"cut ...]\n{text[-half:]}"
                    )
                error = " (error)" if block.get("is_error") else ""
                parts.append(f"[tool result{error}] {text}")
            elif kind == "image":
                parts.append("[an image was shown here]")
    rendered = "\n".join(parts)
    if len(rendered) > SUMMARY_INPUT_CHARS:
        rendered = rendered[-SUMMARY_INPUT_CHARS:]
    return rendered
