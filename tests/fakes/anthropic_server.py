"""A fake Anthropic Messages API: `POST /v1/messages` and `POST /v1/messages/count_tokens`.

    FakeAnthropicServer(responses, count_tokens=None)

`responses` (see `tests.fakes`): reply specs become a full Message — `{"text": "..."}`,
`{"content": [blocks]}` (tool_use blocks get ids when they lack one) and/or `{"tool_calls":
[{"name", "input", "id"?, "toolset_name"?}]}`, with optional `usage` (`input_tokens`,
`output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`, default 10/5/0/0) and
`stop_reason` (default `tool_use` when there are calls, else `end_turn`). Error specs use
Anthropic's shape `{"type": "error", "error": {"type": ..., "message": ...}}`. `count_tokens` is
an int or a callable `(request_json) -> int`; by default a quarter of the request's JSON length.
Token counting does not consume scripted responses. Point the SDK at `server.base_url`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.fakes import FakeProviderServer

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(FakeProviderServer):
    """Answers Messages API requests from a list of scripted responses."""

    provider = "anthropic"
    completion_paths = ("/v1/messages",)

    def __init__(self, responses=None, count_tokens: int | Callable[[dict], int] | None = None):
        super().__init__(responses)
        self.count_tokens = count_tokens

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's `base_url` (it appends `/v1/messages`)."""
        return self.root_url

    def other_path(self, path: str, body: dict) -> tuple[int, dict, dict]:
        if path != "/v1/messages/count_tokens":
            return super().other_path(path, body)
        if callable(self.count_tokens):
            tokens = self.count_tokens(body)
        elif self.count_tokens is not None:
            tokens = self.count_tokens
        else:
            tokens = len(json.dumps(body)) // 4
        return 200, {}, {"input_tokens": int(tokens)}

    def reply(self, spec: dict, request: dict, number: int) -> dict:
        content = [dict(block) for block in spec.get("content", [])]
        if spec.get("text"):
            content.insert(0, {"type": "text", "text": spec["text"]})
        for call in spec.get("tool_calls", []):
            block = {
                "type": "tool_use",
                "id": call.get("id"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
            if call.get("toolset_name"):
                block["toolset_name"] = call["toolset_name"]
            content.append(block)
        for n, block in enumerate(content):
            if block.get("type") == "tool_use" and not block.get("id"):
                block["id"] = f"toolu_fake_{number}_{n}"
        has_calls = any(b.get("type") == "tool_use" for b in content)
        usage = {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
        usage.update(spec.get("usage", {}))
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-fake"),
            "content": content,
            "stop_reason": spec.get("stop_reason") or ("tool_use" if has_calls else "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }

    def error_body(self, status: int, message: str) -> dict:
        return {
            "type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        }
