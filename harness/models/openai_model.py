"""Any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp, OpenAI) through the
`openai` SDK.

Canonical (Anthropic-shaped) history is translated on every call: tool calls become `tool_calls`,
tool results become `role: tool` messages, and images from tool results, which a tool message
cannot hold, follow in one `user` message.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from typing import Any

import openai

from harness.kernel.core import ModelReply, StateActError, ToolSpec, Usage
from harness.models.config import ModelConfig
from harness.models.pricing import resolve_prices, table_entry
from harness.models.retry import Retrier

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 32_768
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""Input key of a tool call whose arguments were not a JSON object; the agent answers with a tool
error."""
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])


def _image_part(block: dict) -> dict | None:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
    elif source.get("type") == "url":
        url = source["url"]
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _user_parts(blocks: list[dict]) -> list[dict]:
    parts = []
    for block in blocks:
        if block.get("type") == "text" and block.get("text"):
            parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image":
            part = _image_part(block)
            parts.append(part or {"type": "text", "text": "[image not available]"})
    return parts


def parse_arguments(raw: str | None) -> dict:
    """A tool call's arguments as a dict, or the raw text under `__invalid_arguments__`."""
    if raw is None or not raw.strip():
        return {}  # some servers send "" for a call without parameters
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


class OpenAIModel:
    """A chat model behind an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(self, name: str, config: ModelConfig | None = None):
        self.name = name
        self.config = config or ModelConfig()
        entry = table_entry("openai", name)
        self.context_window = (
            self.config.context_window
            or (entry.context_window if entry else None)
            or DEFAULT_CONTEXT_WINDOW
        )
        self.prices = resolve_prices("openai", name, self.config.prices)
        self.retrier = Retrier("OpenAI-compatible API", max_retries=self.config.max_retries)
        base_url = self.config.base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = self.config.api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key:
            if not base_url:
                raise StateActError(
                    "OPENAI_API_KEY is not set; export it or pass --api-key (or --base-url for a "
                    "local server)"
                )
            api_key = "none"  # local servers ignore the key, but the SDK insists on one
        self.client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=self.config.timeout_s,
            default_headers=self.config.extra_headers or None,
        )

    def complete(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> ModelReply:
        params: dict[str, Any] = {
            "model": self.name,
            "messages": self.wire_messages(system, messages),
            "max_tokens": self.config.max_tokens,
        }
        if tools:
            params["tools"] = [self.wire_tool(spec) for spec in tools]
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        response = self.retrier.call(
            lambda: self.client.chat.completions.create(**params),
            openai.APIStatusError,
            openai.APIConnectionError,
        )
        return self.parse_response(response.to_dict())

    def count_tokens(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> int | None:
        """Chat-completions servers have no counting endpoint."""
        return None

    @staticmethod
    def wire_tool(spec: ToolSpec) -> dict:
        return {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema,
            },
        }

    def wire_messages(self, system: str, messages: list[dict]) -> list[dict]:
        """Canonical history as chat-completions messages."""
        wire: list[dict] = [{"role": "system", "content": system}] if system else []
        for message in messages:
            blocks = _blocks(message.get("content"))
            if message["role"] == "assistant":
                wire.append(self._assistant_message(blocks))
            else:
                wire.extend(self._user_messages(blocks))
        return wire

    @staticmethod
    def _assistant_message(blocks: list[dict]) -> dict:
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and b.get("text"))
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        calls = []
        for block in blocks:
            if block.get("type") != "tool_use":
                continue
            arguments = block.get("input") or {}
            if INVALID_ARGUMENTS_KEY in arguments:
                raw = str(arguments[INVALID_ARGUMENTS_KEY])  # send back what the model wrote
            else:
                raw = json.dumps(arguments, ensure_ascii=False)
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": raw},
                }
            )
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def _user_messages(blocks: list[dict]) -> list[dict]:
        """Tool messages first (they must follow the assistant's calls), then one user message."""
        tool_messages: list[dict] = []
        images: list[dict] = []
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            inner = _blocks(block.get("content"))
            text = "\n".join(b["text"] for b in inner if b.get("type") == "text" and b.get("text"))
            if block.get("is_error"):
                text = f"Error: {text}" if text else "Error"
            result_images = [b for b in inner if b.get("type") == "image"]
            if result_images and not text:
                text = "(image follows)"
            tool_messages.append(
                {
                    "role": "tool",
                    "tool_call_id": block["tool_use_id"],
                    "content": text or "(no output)",
                }
            )
            for image in result_images:
                images.append(
                    {"type": "text", "text": f"Image from tool call {block['tool_use_id']}:"}
                )
                images.append(image)
        parts = _user_parts(images) + _user_parts(
            [b for b in blocks if b.get("type") in ("text", "image")]
        )
        user = []
        if parts:
            only_text = all(p["type"] == "text" for p in parts)
            content = "\n".join(p["text"] for p in parts) if only_text else parts
            user.append({"role": "user", "content": content})
        return tool_messages + user

    def parse_response(self, data: dict) -> ModelReply:
        """A `ModelReply` in canonical form from a chat-completions response."""
        choices = data.get("choices") or []
        if not choices:
            raise StateActError(
                f"{self.retrier.provider} returned no choices for model {self.name}"
            )
        choice = choices[0]
        message = choice.get("message") or {}
        content: list[dict] = []
        if message.get("content"):
            content.append({"type": "text", "text": message["content"]})
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            content.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                    "name": function.get("name", ""),
                    "input": parse_arguments(function.get("arguments")),
                }
            )
        stop = STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn")
        if any(b["type"] == "tool_use" for b in content):
            stop = "tool_use"  # some servers say "stop" even when they return calls
        return ModelReply(
            content=content, usage=self.usage_from(data.get("usage") or {}), stop_reason=stop
        )

    def usage_from(self, raw: dict) -> Usage:
        """`Usage` with its cost; cached prompt tokens are counted as cache reads, not fresh
        input."""
        prompt = int(raw.get("prompt_tokens") or 0)
        cached = int((raw.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        usage = Usage(
            input_tokens=max(0, prompt - cached),
            output_tokens=int(raw.get("completion_tokens") or 0),
            cache_read_tokens=cached,
        )
        if self.prices is None:
            usage.priced = False  # unknown, not free: the table has no price and none was given
        else:
            usage.cost_usd = self.prices.cost(usage)
        return usage
