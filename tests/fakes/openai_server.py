"""A fake OpenAI-compatible chat API: `POST /v1/chat/completions` (non-streaming).

    FakeOpenAIServer(responses)

`responses` (see `tests.fakes`): reply specs become a full chat completion — `{"text": "..."}`
and/or `{"tool_calls": [{"name", "input" | "arguments", "id"?}]}` where `arguments` is sent
verbatim (to test malformed JSON) and `input` is JSON-encoded; optional `usage` (`prompt_tokens`,
`completion_tokens`, `cached_tokens`, default 10/5/0) and `finish_reason` (default `tool_calls`
when there are calls, else `stop`). Error specs use OpenAI's shape `{"error": {"message", "type",
"code"}}`. Point the SDK at `server.base_url` (which ends in `/v1`).
"""

from __future__ import annotations

import json
import time

from tests.fakes import FakeProviderServer


class FakeOpenAIServer(FakeProviderServer):
    """Answers chat-completions requests from a list of scripted responses."""

    provider = "openai"
    completion_paths = ("/v1/chat/completions",)

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's `base_url` (it appends `/chat/completions`)."""
        return f"{self.root_url}/v1"

    def reply(self, spec: dict, request: dict, number: int) -> dict:
        calls = []
        for n, call in enumerate(spec.get("tool_calls", [])):
            arguments = call.get("arguments")
            if arguments is None:
                arguments = json.dumps(call.get("input", {}))
            calls.append(
                {
                    "id": call.get("id") or f"call_fake_{number}_{n}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            )
        message: dict = {"role": "assistant", "content": spec.get("text")}
        if calls:
            message["tool_calls"] = calls
        usage_spec = spec.get("usage", {})
        prompt = int(usage_spec.get("prompt_tokens", 10))
        completion = int(usage_spec.get("completion_tokens", 5))
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": spec.get("finish_reason")
                    or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": int(usage_spec.get("cached_tokens", 0))},
            },
        }

    def error_body(self, status: int, message: str) -> dict:
        kind = (
            "rate_limit_error"
            if status == 429
            else "invalid_request_error"
            if status < 500
            else "server_error"
        )
        return {"error": {"message": message, "type": kind, "code": None}}
