"""Claude through the official `anthropic` SDK: native tool types, prompt caching, retries and cost.

Canonical messages are already Anthropic-shaped, so translation is mostly hygiene (private keys
stripped, cache breakpoints placed) plus the computer toolset, whose member calls (`left_click`
with `toolset_name: "computer"`) become canonical `computer` calls with an `action`, and back.
"""

from __future__ import annotations

import copy
import logging
import os
from typing import Any

import anthropic

from harness.kernel.core import ModelReply, StateActError, ToolSpec, Usage
from harness.models.claude_tools import (
    COMPUTER_TOOLSET,
    computer_tool_version,
    supports_native_tools,
)
from harness.models.config import ModelConfig
from harness.models.pricing import resolve_prices, table_entry
from harness.models.retry import Retrier

log = logging.getLogger(__name__)

BASH_TOOL = "bash_20250124"
EDITOR_TOOL = "text_editor_20250728"
COMPUTER_BETAS = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
# Native tools carry fixed names; a spec with another name is sent as a plain custom tool.
NATIVE_NAMES = {
    "bash": "bash",
    "text_editor": "str_replace_based_edit_tool",
    "computer": "computer",
}
DEFAULT_CONTEXT_WINDOW = 200_000
EPHEMERAL = {"type": "ephemeral"}
TOOLSET_KEY = "_toolset_name"
MEMBER_KEY = "_member"


def _native_family(native_type: str) -> str | None:
    for family in NATIVE_NAMES:
        if native_type.startswith(family):
            return family
    return None


def _clean(block: dict) -> dict:
    """A copy without our private keys and without stale cache breakpoints."""
    return {k: v for k, v in block.items() if not k.startswith("_") and k != "cache_control"}


def _content_blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])


def _wire_inner(block: dict) -> dict | None:
    """A text or image block inside a message or a tool result, as the API wants it."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block["text"]} if block.get("text") else None
    if kind == "image":
        if "source" in block:
            return {"type": "image", "source": block["source"]}
        # A recorded image whose bytes were not loaded back: say so instead of failing the call.
        return {"type": "text", "text": f"[image not available: {block.get('file', 'no data')}]"}
    return _clean(block)


class AnthropicModel:
    """A Claude model behind the Messages API."""

    def __init__(self, name: str, config: ModelConfig | None = None):
        self.name = name
        self.config = config or ModelConfig()
        entry = table_entry("anthropic", name)
        self.context_window = (
            self.config.context_window
            or (entry.context_window if entry else None)
            or DEFAULT_CONTEXT_WINDOW
        )
        self.prices = resolve_prices("anthropic", name, self.config.prices)
        self.retrier = Retrier("Anthropic API", max_retries=self.config.max_retries)
        api_key = self.config.api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise StateActError("ANTHROPIC_API_KEY is not set; export it or pass --api-key")
        self.client = anthropic.Anthropic(
            api_key=api_key,
            base_url=self.config.base_url or None,  # None lets the SDK read ANTHROPIC_BASE_URL
            max_retries=0,
            timeout=self.config.timeout_s,
            default_headers=self.config.extra_headers or None,
        )

    # -- public API
    # ---------------------------------------------------------------------------------

    def complete(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> ModelReply:
        params, betas = self.request_params(system, messages, tools)
        params["max_tokens"] = self.config.max_tokens
        if self.config.adaptive_thinking:  # the model decides how much to think (Claude 4.6+)
            params["thinking"] = {"type": "adaptive"}
        elif self.config.thinking_budget:
            budget = self.config.thinking_budget
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
            params["max_tokens"] = max(self.config.max_tokens, budget + 4096)
        elif self.config.temperature is not None:  # the SDK 2.x / API 2026-10-21 has none
            raise StateActError(
                "the Anthropic Messages API takes no sampling temperature (any value is refused); "
                "leave `temperature` unset for anthropic/ models."
            )
        api = self.client.beta.messages if betas else self.client.messages
        extra = {"betas": betas} if betas else {}
        response = self.retrier.call(
            lambda: api.create(**params, **extra, timeout=self.config.timeout_s),
            anthropic.APIStatusError,
            anthropic.APIConnectionError,
        )
        return self.parse_response(response.to_dict())

    def count_tokens(self, system: str, messages: list[dict], tools: list[ToolSpec]) -> int | None:
        """Input tokens of this request by the free counting endpoint; None if it is unavailable."""
        params, betas = self.request_params(system, messages, tools)
        api = self.client.beta.messages if betas else self.client.messages
        extra = {"betas": betas} if betas else {}
        try:
            result = self.retrier.call(
                lambda: api.count_tokens(**params, **extra, timeout=self.config.timeout_s),
                anthropic.APIStatusError,
                anthropic.APIConnectionError,
            )
        except StateActError as exc:
            log.warning("token counting unavailable: %s", exc)
            return None
        return int(result.input_tokens)

    # -- request
    # ------------------------------------------------------------------------------------

    def request_params(
        self, system: str, messages: list[dict], tools: list[ToolSpec]
    ) -> tuple[dict, list[str]]:
        """The `messages.create` arguments (without sampling settings) and the beta flags they
        need."""
        wire_tools, betas, toolset_tools = self.wire_tools(tools)
        params: dict[str, Any] = {
            "model": self.name,
            "messages": self.wire_messages(messages, toolset_tools),
        }
        if system:
            params["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
        if wire_tools:
            wire_tools[-1]["cache_control"] = dict(EPHEMERAL)
            params["tools"] = wire_tools
        return params, betas

    def wire_tools(self, tools: list[ToolSpec]) -> tuple[list[dict], list[str], set[str]]:
        """Tool definitions, beta flags, and the names of tools served as a toolset."""
        wire: list[dict] = []
        betas: list[str] = []
        toolset_tools: set[str] = set()
        native_ok = supports_native_tools(self.name)
        for spec in tools:
            family = _native_family(spec.native_type or "")
            if not native_ok or family is None or spec.name != NATIVE_NAMES[family]:
                wire.append(
                    {
                        "name": spec.name,
                        "description": spec.description,
                        "input_schema": spec.input_schema,
                    }
                )
            elif family == "bash":
                wire.append({"type": BASH_TOOL, "name": "bash"})
            elif family == "text_editor":
                tool = {"type": EDITOR_TOOL, "name": spec.name}
                if "max_characters" in spec.native_params:
                    tool["max_characters"] = spec.native_params["max_characters"]
                wire.append(tool)
            else:
                version = computer_tool_version(self.name)
                wire.append(self._computer_tool(version, spec.native_params))
                if version == COMPUTER_TOOLSET:
                    toolset_tools.add(spec.name)
                elif COMPUTER_BETAS[version] not in betas:
                    betas.append(COMPUTER_BETAS[version])
        return wire, betas, toolset_tools

    @staticmethod
    def _computer_tool(version: str, params: dict) -> dict:
        if version == COMPUTER_TOOLSET:
            # The toolset entry has no name or display size; zoom is switched through its configs.
            configs = copy.deepcopy(params.get("configs") or {})
            if "enable_zoom" in params:
                configs.setdefault("zoom", {})["enabled"] = bool(params["enable_zoom"])
            return {"type": version, **({"configs": configs} if configs else {})}
        if "display_width_px" not in params or "display_height_px" not in params:
            raise StateActError(
                "the computer tool needs display_width_px and display_height_px in native_params"
            )
        tool = {
            "type": version,
            "name": "computer",
            "display_width_px": int(params["display_width_px"]),
            "display_height_px": int(params["display_height_px"]),
        }
        if params.get("display_number") is not None:
            tool["display_number"] = int(params["display_number"])
        if version == "computer_20251124" and "enable_zoom" in params:
            tool["enable_zoom"] = bool(params["enable_zoom"])
        return tool

    def wire_messages(self, messages: list[dict], toolset_tools: set[str]) -> list[dict]:
        """Canonical messages as the API takes them, with cache breakpoints on the last two user
        turns."""
        toolset_of = self._toolset_calls(messages, toolset_tools)
        wire: list[dict] = []
        for message in messages:
            blocks = []
            for block in _content_blocks(message.get("content")):
                converted = self._wire_block(block, toolset_of)
                if converted is not None:
                    blocks.append(converted)
            wire.append({"role": message["role"], "content": blocks})
        user_turns = [m for m in wire if m["role"] == "user" and m["content"]]
        for message in user_turns[-2:]:
            message["content"][-1]["cache_control"] = dict(EPHEMERAL)
        return wire

    @staticmethod
    def _toolset_calls(messages: list[dict], toolset_tools: set[str]) -> dict[str, str]:
        """tool_use id -> toolset name, for every call that must travel as a toolset member."""
        calls: dict[str, str] = {}
        for message in messages:
            if message.get("role") != "assistant":
                continue
            for block in _content_blocks(message.get("content")):
                if block.get("type") != "tool_use":
                    continue
                if block.get(TOOLSET_KEY):
                    calls[block["id"]] = block[TOOLSET_KEY]
                elif block.get("name") in toolset_tools:
                    calls[block["id"]] = block["name"]
        return calls

    @staticmethod
    def _wire_block(block: dict, toolset_of: dict[str, str]) -> dict | None:
        kind = block.get("type")
        if kind == "tool_use" and block.get("id") in toolset_of:
            params = dict(block.get("input") or {})
            member = block.get(MEMBER_KEY) or params.pop("action", None)
            params.pop("action", None)
            if not member:
                raise StateActError(
                    f"computer call {block['id']} has no action to send as a member"
                )
            return {
                "type": "tool_use",
                "id": block["id"],
                "name": member,
                "input": params,
                "toolset_name": toolset_of[block["id"]],
            }
        if kind == "tool_result":
            result = _clean(block)
            inner = [_wire_inner(b) for b in _content_blocks(block.get("content"))]
            inner = [b for b in inner if b is not None]
            if inner:
                result["content"] = inner
            else:
                result.pop("content", None)
            if not block.get("is_error"):
                result.pop("is_error", None)
            if block.get("tool_use_id") in toolset_of:
                result["toolset_name"] = toolset_of[block["tool_use_id"]]
            return result
        if kind in ("text", "image"):
            return _wire_inner(block)
        return _clean(block)

    # -- response
    # -----------------------------------------------------------------------------------

    def parse_response(self, data: dict) -> ModelReply:
        """A `ModelReply` in canonical form from the API's JSON response."""
        content: list[dict] = []
        for block in data.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                content.append({"type": "text", "text": block.get("text", "")})
            elif kind == "tool_use" and block.get("toolset_name"):
                toolset = block["toolset_name"]
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": toolset,
                        "input": {"action": block["name"], **(block.get("input") or {})},
                        TOOLSET_KEY: toolset,
                        MEMBER_KEY: block["name"],
                    }
                )
            elif kind == "tool_use":
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": block.get("input") or {},
                    }
                )
            else:
                # thinking (with its signature), server tool blocks, compaction: kept verbatim to
                # send back
                content.append({k: v for k, v in block.items() if v is not None})
        return ModelReply(
            content=content,
            usage=self.usage_from(data.get("usage") or {}),
            stop_reason=data.get("stop_reason") or "end_turn",
        )

    def usage_from(self, raw: dict) -> Usage:
        """`Usage` with its cost, from the API's usage object."""
        usage = Usage(
            input_tokens=int(raw.get("input_tokens") or 0),
            output_tokens=int(raw.get("output_tokens") or 0),
            cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
            cache_write_tokens=int(raw.get("cache_creation_input_tokens") or 0),
        )
        write_1h = int((raw.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0)
        if self.prices is None:
            usage.priced = False  # unknown, not free: the table has no price and none was given
        else:
            usage.cost_usd = self.prices.cost(usage, cache_write_1h_tokens=write_1h)
        return usage
