"""Model clients against fake provider servers, spoken to by the real SDKs over HTTP."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from harness.kernel.core import (
    BudgetExceeded,
    Model,
    StateActError,
    ToolResult,
    ToolSpec,
    image_block,
)
from harness.models import ModelConfig, make_model
from harness.models.anthropic_model import AnthropicModel
from harness.models.claude_tools import computer_tool_version
from harness.models.openai_model import INVALID_ARGUMENTS_KEY, OpenAIModel
from harness.models.retry import retry_after_seconds
from harness.models.scripted import ScriptedModel
from tests.fakes import FakeAnthropicServer, FakeOpenAIServer

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
BASH = ToolSpec("bash", "Run a shell command.", SCHEMA, native_type="bash_20250124")
EDITOR = ToolSpec(
    "str_replace_based_edit_tool",
    "Edit files.",
    {"type": "object"},
    native_type="text_editor_20250728",
)
FINISH = ToolSpec(
    "finish", "Finish the task.", {"type": "object", "properties": {"summary": {"type": "string"}}}
)
COMPUTER = ToolSpec(
    "computer",
    "Use the screen.",
    {"type": "object", "properties": {"action": {"type": "string"}}},
    native_type="computer_20250124",
    native_params={"display_width_px": 1280, "display_height_px": 720},
)
PNG = b"\x89PNG\r\n\x1a\nfake-image-bytes"


def anthropic(server, name="claude-sonnet-4-5", **config) -> AnthropicModel:
    return AnthropicModel(name, ModelConfig(base_url=server.base_url, api_key="test-key", **config))


def openai_model(server, name="qwen2.5-coder", **config) -> OpenAIModel:
    return OpenAIModel(name, ModelConfig(base_url=server.base_url, **config))


def record_sleeps(model) -> list[float]:
    waits: list[float] = []
    model.retrier.sleep = waits.append
    return waits


def breakpoints(request: dict) -> list[str]:
    """Where the request's cache_control markers sit."""
    found = [f"system{i}" for i, b in enumerate(request.get("system", [])) if "cache_control" in b]
    found += [
        f"tool:{t.get('name') or t['type']}"
        for t in request.get("tools", [])
        if "cache_control" in t
    ]
    for i, message in enumerate(request["messages"]):
        found += [f"msg{i}.{j}" for j, b in enumerate(message["content"]) if "cache_control" in b]
    return found


# -- Anthropic
# ---------------------------------------------------------------------------------------


def test_anthropic_text_and_tool_use_round_trip():
    replies = [
        {
            "text": "Listing files.",
            "tool_calls": [{"name": "bash", "input": {"command": "ls"}, "id": "toolu_1"}],
        },
        {"text": "Done."},
    ]
    with FakeAnthropicServer(replies) as server:
        model = anthropic(server)
        history = [{"role": "user", "content": [{"type": "text", "text": "List the files."}]}]
        reply = model.complete("You are helpful.", history, [BASH, FINISH])
        assert reply.stop_reason == "tool_use"
        assert reply.text == "Listing files."
        assert reply.tool_uses == [
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
        ]

        result = ToolResult(output="a.txt", image_png=PNG)
        history += [
            {
                "role": "assistant",
                "content": reply.content + [{"type": "text", "text": "", "_note": "x"}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": result.to_blocks(),
                        "is_error": False,
                    }
                ],
            },
        ]
        final = model.complete("You are helpful.", history, [BASH, FINISH])
        assert final.text == "Done." and final.stop_reason == "end_turn"

    sent = server.requests[-1]["json"]
    assert sent["model"] == "claude-sonnet-4-5" and sent["max_tokens"] == 8192
    assistant, tool_turn = sent["messages"][1], sent["messages"][2]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]  # empty text dropped
    assert all(not k.startswith("_") for b in assistant["content"] for k in b)
    tool_result = tool_turn["content"][0]
    assert tool_result["tool_use_id"] == "toolu_1" and "is_error" not in tool_result
    assert tool_result["content"][0] == {"type": "text", "text": "a.txt"}
    assert tool_result["content"][1]["source"]["data"] == image_block(PNG)["source"]["data"]


def test_anthropic_sends_native_tool_types_for_claude_4_and_schemas_otherwise():
    with FakeAnthropicServer([{"text": "ok"}, {"text": "ok"}]) as server:
        anthropic(server).complete("", [{"role": "user", "content": "hi"}], [BASH, EDITOR, FINISH])
        anthropic(server, "claude-3-5-haiku-20241022").complete(
            "", [{"role": "user", "content": "hi"}], [BASH, FINISH]
        )
    native, legacy = (r["json"]["tools"] for r in server.requests)
    assert native[0] == {"type": "bash_20250124", "name": "bash"}
    assert native[1] == {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
    assert native[2]["name"] == "finish" and native[2]["input_schema"] == FINISH.input_schema
    assert "type" not in legacy[0] and legacy[0]["input_schema"] == SCHEMA
    assert "system" not in server.requests[0]["json"]  # an empty system prompt is left out


def test_anthropic_cache_breakpoints_on_system_last_tool_and_last_two_user_turns():
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "task", "cache_control": {"type": "ephemeral"}}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "a"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "1"}],
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "b"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": [{"type": "text", "text": "2"}],
                },
                {"type": "text", "text": "plan: step 2"},
            ],
        },
    ]
    with FakeAnthropicServer([{"text": "ok"}]) as server:
        anthropic(server).complete("system prompt", history, [BASH, FINISH])
    sent = server.requests[0]["json"]
    marks = breakpoints(sent)
    assert marks == ["system0", "tool:finish", "msg2.0", "msg4.1"]
    assert len(marks) <= 4
    assert history[0]["content"][0]["cache_control"]  # the caller's history is not modified


def test_anthropic_retries_529_then_429_honouring_retry_after(caplog):
    replies = [
        {"status": 529},
        {"status": 429, "headers": {"retry-after": "0.2"}},
        {"text": "finally"},
    ]
    with FakeAnthropicServer(replies) as server:
        model = anthropic(server)
        waits = record_sleeps(model)
        with caplog.at_level("WARNING", logger="harness.models.retry"):
            reply = model.complete("s", [{"role": "user", "content": "hi"}], [])
    assert reply.text == "finally"
    assert len(server.requests) == 3
    assert 0.5 <= waits[0] <= 1.0  # backoff with jitter when the server names no wait
    assert waits[1] == pytest.approx(0.2)
    assert "status 529" in caplog.text and "status 429" in caplog.text


def test_anthropic_gives_up_after_max_retries_naming_the_status():
    with FakeAnthropicServer([{"status": 529, "headers": {"retry-after": "0"}}] * 3) as server:
        model = anthropic(server, max_retries=2)
        waits = record_sleeps(model)
        with pytest.raises(StateActError, match=r"still answered 529 .*after 2 retries"):
            model.complete("s", [{"role": "user", "content": "hi"}], [])
    assert len(server.requests) == 3 and waits == [0.0, 0.0]


def test_anthropic_400_is_one_clear_error_without_retry():
    error = {"status": 400, "message": "messages: roles must alternate"}
    with FakeAnthropicServer([error, {"text": "never"}]) as server:
        model = anthropic(server)
        waits = record_sleeps(model)
        with pytest.raises(StateActError) as info:
            model.complete("s", [{"role": "user", "content": "hi"}], [])
    assert (
        str(info.value)
        == "Anthropic API rejected the request (400): messages: roles must alternate"
    )
    assert len(server.requests) == 1 and waits == []


def test_exhausted_fake_answers_500_that_the_client_does_not_retry():
    with FakeAnthropicServer([]) as server:
        model = anthropic(server)
        waits = record_sleeps(model)
        with pytest.raises(StateActError, match="no scripted responses left"):
            model.complete("s", [{"role": "user", "content": "hi"}], [])
    assert waits == []


def test_anthropic_cost_counts_cache_reads_and_writes():
    usage = {
        "input_tokens": 1000,
        "output_tokens": 500,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 4000,
    }
    with FakeAnthropicServer(
        [{"text": "a", "usage": usage}, {"text": "b", "usage": usage}]
    ) as server:
        opus = anthropic(server, "claude-opus-4-5-20251101")
        reply = opus.complete("s", [{"role": "user", "content": "hi"}], [])
        custom = anthropic(server, "claude-opus-4-5", prices={"input": 1, "output": 2})
        cheap = custom.complete("s", [{"role": "user", "content": "hi"}], [])
    u = reply.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        1000,
        500,
        2000,
        4000,
    )
    assert u.cost_usd == pytest.approx((1000 * 5 + 500 * 25 + 2000 * 0.5 + 4000 * 6.25) / 1e6)
    assert cheap.usage.cost_usd == pytest.approx(
        (1000 * 1 + 500 * 2 + 2000 * 0.1 + 4000 * 1.25) / 1e6
    )
    assert u.prompt_tokens == 7000


def test_anthropic_count_tokens_uses_the_counting_endpoint():
    with FakeAnthropicServer(
        [], count_tokens=lambda body: 4321 if body.get("tools") else 1
    ) as server:
        tokens = anthropic(server).count_tokens("sys", [{"role": "user", "content": "hi"}], [BASH])
    assert tokens == 4321
    request = server.requests[0]
    assert request["path"] == "/v1/messages/count_tokens"
    assert request["json"]["system"][0]["text"] == "sys" and "max_tokens" not in request["json"]
    assert server.served == 0  # counting does not use up scripted replies


def test_anthropic_thinking_blocks_are_kept_and_sent_back():
    thinking = {"type": "thinking", "thinking": "let me see", "signature": "sig123"}
    with FakeAnthropicServer(
        [{"content": [thinking, {"type": "text", "text": "ok"}]}, {"text": "again"}]
    ) as server:
        model = anthropic(server, thinking_budget=2048, temperature=0.3)
        reply = model.complete("s", [{"role": "user", "content": "hi"}], [])
        history = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": "go on"},
        ]
        model.complete("s", history, [])
    assert reply.content[0] == thinking
    sent = server.requests[1]["json"]
    assert (
        sent["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in sent
    )
    assert sent["messages"][1]["content"][0] == thinking


def test_computer_tool_versions_by_model():
    assert computer_tool_version("claude-sonnet-4-5-20250929") == "computer_20250124"
    assert computer_tool_version("claude-haiku-4-5") == "computer_20250124"
    assert computer_tool_version("claude-opus-4-1-20250805") == "computer_20250124"
    assert computer_tool_version("claude-sonnet-4-20250514") == "computer_20250124"
    assert computer_tool_version("claude-opus-4-5-20251101") == "computer_20251124"
    assert computer_tool_version("claude-opus-4-7") == "computer_20251124"
    assert computer_tool_version("claude-sonnet-4-6") == "computer_20251124"
    assert computer_tool_version("claude-opus-4-8") == "computer_toolset_20260801"
    assert computer_tool_version("claude-opus-5") == "computer_toolset_20260801"
    assert computer_tool_version("claude-sonnet-5") == "computer_toolset_20260801"


def test_computer_tool_with_beta_header_for_opus_4_5():
    with FakeAnthropicServer([{"text": "ok"}]) as server:
        anthropic(server, "claude-opus-4-5").complete(
            "s", [{"role": "user", "content": "hi"}], [COMPUTER]
        )
    request = server.requests[0]
    assert request["headers"]["anthropic-beta"] == "computer-use-2025-11-24"
    tool = request["json"]["tools"][0]
    assert tool["type"] == "computer_20251124" and tool["name"] == "computer"
    assert (tool["display_width_px"], tool["display_height_px"]) == (1280, 720)


def test_computer_toolset_translation_round_trip():
    member_call = {
        "name": "left_click",
        "toolset_name": "computer",
        "input": {"coordinate": [10, 20]},
        "id": "toolu_c1",
    }
    with FakeAnthropicServer([{"tool_calls": [member_call]}, {"text": "clicked"}]) as server:
        model = anthropic(server, "claude-opus-4-8")
        history = [{"role": "user", "content": "click the cell"}]
        reply = model.complete("s", history, [COMPUTER, FINISH])
        call = reply.tool_uses[0]
        assert call["name"] == "computer" and call["input"] == {
            "action": "left_click",
            "coordinate": [10, 20],
        }
        shot = ToolResult(output="", image_png=PNG).to_blocks()
        history += [
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_c1", "content": shot}],
            },
        ]
        model.complete("s", history, [COMPUTER, FINISH])
    first, second = server.requests
    assert "anthropic-beta" not in first["headers"]
    assert first["json"]["tools"][0] == {"type": "computer_toolset_20260801"}
    sent_call = second["json"]["messages"][1]["content"][0]
    assert sent_call == {
        "type": "tool_use",
        "id": "toolu_c1",
        "name": "left_click",
        "input": {"coordinate": [10, 20]},
        "toolset_name": "computer",
    }
    sent_result = second["json"]["messages"][2]["content"][0]
    assert (
        sent_result["toolset_name"] == "computer" and sent_result["content"][0]["type"] == "image"
    )


def test_retry_after_accepts_seconds_and_http_dates():
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after_seconds({"retry-after": later}) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_long_retry_after_is_capped_at_60_seconds():
    with FakeAnthropicServer(
        [{"status": 429, "headers": {"retry-after": "3600"}}, {"text": "ok"}]
    ) as server:
        model = anthropic(server)
        waits = record_sleeps(model)
        model.complete("s", [{"role": "user", "content": "hi"}], [])
    assert waits == [60.0]


# -- OpenAI-compatible
# --------------------------------------------------------------------------------


def test_openai_tool_call_round_trip_with_images_in_a_following_user_message():
    replies = [
        {
            "text": "Taking a look.",
            "tool_calls": [
                {"name": "bash", "input": {"command": "ls"}, "id": "call_1"},
                {"name": "finish", "input": {}, "id": "call_2"},
            ],
        },
        {"text": "All done."},
    ]
    with FakeOpenAIServer(replies) as server:
        model = openai_model(server, temperature=0.0)
        history = [{"role": "user", "content": "List the files."}]
        reply = model.complete("sys", history, [BASH, FINISH])
        assert reply.stop_reason == "tool_use" and [c["id"] for c in reply.tool_uses] == [
            "call_1",
            "call_2",
        ]
        assert reply.tool_uses[0]["input"] == {"command": "ls"}
        history += [
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": ToolResult(output="a.txt", image_png=PNG).to_blocks(),
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_2",
                        "content": [{"type": "text", "text": "not yet"}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Plan: check the files."},
                ],
            },
        ]
        final = model.complete("sys", history, [BASH, FINISH])
    assert final.text == "All done." and final.stop_reason == "end_turn"
    sent = server.requests[1]["json"]
    assert sent["tools"][0]["function"]["name"] == "bash" and sent["temperature"] == 0.0
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = sent["messages"][2]
    assert assistant["content"] == "Taking a look."
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"command": "ls"}
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
    assert sent["messages"][4]["content"] == "Error: not yet"
    parts = sent["messages"][5]["content"]
    image = next(p for p in parts if p["type"] == "image_url")
    assert (
        image["image_url"]["url"] == "data:image/png;base64," + image_block(PNG)["source"]["data"]
    )
    assert parts[-1] == {"type": "text", "text": "Plan: check the files."}


def test_openai_malformed_arguments_are_flagged_and_echoed_back():
    bad = {"tool_calls": [{"name": "bash", "arguments": '{"command": "ls"', "id": "call_x"}]}
    with FakeOpenAIServer([bad, {"text": "fixed"}]) as server:
        model = openai_model(server)
        reply = model.complete("", [{"role": "user", "content": "go"}], [BASH])
        call = reply.tool_uses[0]
        assert call["input"] == {INVALID_ARGUMENTS_KEY: '{"command": "ls"'}
        history = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_x",
                        "content": [{"type": "text", "text": "invalid JSON"}],
                        "is_error": True,
                    }
                ],
            },
        ]
        model.complete("", history, [BASH])
    echoed = server.requests[1]["json"]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert echoed == '{"command": "ls"'


def test_openai_usage_counts_cached_prompt_tokens_and_prices():
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "cached_tokens": 600}
    with FakeOpenAIServer([{"text": "a", "usage": usage}, {"text": "b", "usage": usage}]) as server:
        free = openai_model(server).complete("", [{"role": "user", "content": "hi"}], [])
        paid = openai_model(server, prices={"input": 2, "output": 8, "cache_read": 0.5}).complete(
            "", [{"role": "user", "content": "hi"}], []
        )
    u = free.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.cost_usd) == (
        400,
        600,
        100,
        0.0,
    )
    assert u.prompt_tokens == 1000
    assert paid.usage.cost_usd == pytest.approx((400 * 2 + 100 * 8 + 600 * 0.5) / 1e6)


def test_openai_retries_429_and_reports_bad_requests():
    replies = [
        {"status": 429, "headers": {"retry-after": "0.2"}},
        {"text": "ok"},
        {"status": 400, "message": "model not found"},
    ]
    with FakeOpenAIServer(replies) as server:
        model = openai_model(server)
        waits = record_sleeps(model)
        assert model.complete("", [{"role": "user", "content": "hi"}], []).text == "ok"
        with pytest.raises(StateActError, match=r"\(400\): model not found"):
            model.complete("", [{"role": "user", "content": "hi"}], [])
    assert waits == [pytest.approx(0.2)]


def test_openai_local_server_needs_no_key_but_remote_does(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert make_model("openai/llama", ModelConfig(base_url="http://127.0.0.1:9/v1")).name == "llama"
    with pytest.raises(StateActError, match="OPENAI_API_KEY is not set"):
        make_model("openai/gpt-4o")


# -- scripted and replay
# -------------------------------------------------------------------------------


def test_scripted_model_plays_dicts_and_callables_then_runs_out():
    def react(system, messages, tools):
        last = messages[-1]["content"][0]["content"][0]["text"]
        return {"tool_calls": [{"name": "finish", "input": {"summary": f"saw {last}"}}]}

    model = ScriptedModel(
        [
            {
                "text": "look",
                "tool_calls": [{"name": "bash", "input": {"command": "ls"}, "id": "b1"}],
            },
            react,
        ]
    )
    messages = [{"role": "user", "content": [{"type": "text", "text": "x" * 400}]}]
    first = model.complete("", messages, [BASH])
    assert first.tool_uses[0]["id"] == "b1" and first.stop_reason == "tool_use"
    assert first.usage.input_tokens == len(json.dumps(messages)) // 4
    messages += [
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "b1",
                    "content": [{"type": "text", "text": "a.txt"}],
                }
            ],
        },
    ]
    second = model.complete("", messages, [BASH])
    assert second.tool_uses[0]["input"] == {"summary": "saw a.txt"}
    assert second.tool_uses[0]["id"] == "toolu_script_1_0"
    with pytest.raises(BudgetExceeded) as info:
        model.complete("", messages, [BASH])
    assert info.value.status == "script_exhausted"


def test_script_files_json_and_jsonl(tmp_path):
    json_file = tmp_path / "s.json"
    json_file.write_text(
        json.dumps({"turns": [{"text": "a"}, {"text": "b", "usage": {"input_tokens": 7}}]})
    )
    jsonl_file = tmp_path / "s.jsonl"
    jsonl_file.write_text('{"text": "one"}\n\n{"tool_calls": [{"name": "finish", "input": {}}]}\n')
    model = make_model(f"script/{json_file}", ModelConfig(context_window=5000))
    assert model.context_window == 5000
    assert [model.complete("", [], []).text for _ in range(2)] == ["a", "b"]
    lines = make_model(f"script/{jsonl_file}")
    assert lines.complete("", [], []).text == "one"
    assert lines.complete("", [], []).tool_uses[0]["name"] == "finish"


def test_replay_model_returns_recorded_turns_with_ids_and_images(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "0001.png").write_bytes(PNG)
    records = [
        {"event": "run_start", "task": "t"},
        {
            "event": "model_turn",
            "content": [
                {"type": "tool_use", "id": "toolu_A", "name": "bash", "input": {"command": "ls"}}
            ],
            "usage": {"input_tokens": 50, "output_tokens": 9},
        },
        {"event": "tool_result", "tool_use_id": "toolu_A"},
        {
            "event": "model_turn",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "file": "images/0001.png"},
            ],
        },
    ]
    (tmp_path / "trajectory.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    model = make_model(f"replay/{tmp_path}")
    first = model.complete("", [], [])
    assert (
        first.tool_uses[0]["id"] == "toolu_A"
        and first.usage.input_tokens == 50
        and first.stop_reason == "tool_use"
    )
    second = model.complete("", [], [])
    assert second.content[1] == image_block(PNG)
    with pytest.raises(BudgetExceeded, match="no model turn left"):
        model.complete("", [], [])


# -- make_model
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "invalid model spec"),
        ("claude-sonnet-4-5", "invalid model spec"),
        ("anthropic/", "invalid model spec"),
        ("gemini/pro", "unknown model provider 'gemini'"),
        ("script/does/not/exist.json", "does not exist"),
        ("replay/no/such/run", "not a run directory"),
    ],
)
def test_make_model_rejects_bad_specs(spec, message):
    with pytest.raises(StateActError, match=message):
        make_model(spec)


def test_make_model_anthropic_needs_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(
        StateActError, match="^ANTHROPIC_API_KEY is not set; export it or pass --api-key$"
    ):
        make_model("anthropic/claude-sonnet-4-5")
    model = make_model("anthropic/claude-sonnet-4-5", ModelConfig(api_key="k"))
    assert isinstance(model, Model) and model.context_window == 200_000


@pytest.mark.parametrize(
    "content",
    ['[{"text": 3}]', '[{"tool_calls": [{"input": {}}]}]', "[]", "not json\n{", '[{"say": "hi"}]'],
)
def test_invalid_script_files_are_one_clear_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(StateActError):
        make_model(f"script/{path}")
