"""No key or auth header in any run record, and each model spec calls its own provider with its
own settings: real SDKs over HTTP to the fake providers, a real sandbox, the whole run folder
grepped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.kernel.secrets import REDACTED
from harness.models import ModelConfig
from tests.conftest import require_image, stateact
from tests.fakes import FakeAnthropicServer, FakeOpenAIServer

KEY_A = "sk-ant-planted-4d9c1e7f0b2a"
KEY_O = "sk-oai-planted-8e1f3a6c9d0b"


def calls(*pairs) -> dict:
    return {"tool_calls": [{"name": name, "input": params} for name, params in pairs]}


def agent_turns(key: str) -> list[dict]:
    """Three steps that put the key into the model's text and a tool result, then finish."""
    echo = calls(("bash", {"command": f"echo {key} > /home/user/k.txt; cat /home/user/k.txt"}))
    return [
        {**echo, "text": f"I will use {key}"},
        calls(("bash", {"command": "ls /home/user"})),
        calls(("bash", {"command": "true"})),
        calls(("finish", {"summary": f"done with {key}"})),
    ]


GATE_TURNS = [calls(("verdict", {"passed": True, "gaps": []}))]


def task_file(folder: Path) -> Path:
    path = folder / "task.json"
    path.write_text(json.dumps({"id": "keys", "instruction": "Write k.txt."}))
    return path


def sent_key(request: dict) -> str | None:
    """The key a request carried (x-api-key, or a bearer token), checking it carried only one."""
    headers = request["headers"]
    bearer = (headers.get("authorization") or "").removeprefix("Bearer ") or None
    keys = {key for key in (headers.get("x-api-key"), bearer) if key}
    assert len(keys) <= 1, keys
    return next(iter(keys), None)


def assert_no_key_in(run_dir: Path, *keys: str) -> None:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"config.json", "trajectory.jsonl", "result.json"}
    assert (run_dir / "gate" / "round-1.json").is_file()
    for path in files:
        data = path.read_bytes()
        for key in keys:
            assert key.encode() not in data, f"{key} leaked into {path}"
    assert REDACTED in (run_dir / "trajectory.jsonl").read_text()


@pytest.mark.docker
@pytest.mark.slow
def test_anthropic_main_with_openai_gate_keeps_each_providers_settings(tmp_path):
    require_image("base")
    task = task_file(tmp_path)
    with (
        FakeAnthropicServer(agent_turns(KEY_A)) as anthropic_fake,
        FakeOpenAIServer(GATE_TURNS) as openai_fake,
    ):
        done = stateact(
            "run",
            str(task),
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--base-url",
            anthropic_fake.base_url,
            "--api-key",
            KEY_A,
            "--gate-model",
            "openai/gate-model",
            "--image",
            "base",
            "--out",
            str(tmp_path / "run"),
            env={"OPENAI_BASE_URL": openai_fake.base_url, "OPENAI_API_KEY": KEY_O},
        )
        main_requests = anthropic_fake.completion_requests()
        gate_requests = openai_fake.completion_requests()
    assert done.returncode == 0, done.stderr
    assert len(main_requests) == 4 and len(gate_requests) == 1
    assert {sent_key(r) for r in main_requests} == {KEY_A}
    assert sent_key(gate_requests[0]) == KEY_O
    assert_no_key_in(tmp_path / "run", KEY_A, KEY_O)
    assert "api_key" not in json.loads((tmp_path / "run" / "config.json").read_text())


@pytest.mark.docker
@pytest.mark.slow
def test_openai_main_with_anthropic_gate_keeps_each_providers_settings(tmp_path):
    require_image("base")
    task = task_file(tmp_path)
    with (
        FakeOpenAIServer(agent_turns(KEY_O)) as openai_fake,
        FakeAnthropicServer(GATE_TURNS) as anthropic_fake,
    ):
        done = stateact(
            "run",
            str(task),
            "--model",
            "openai/local-model",
            "--base-url",
            openai_fake.base_url,
            "--api-key",
            KEY_O,
            "--gate-model",
            "anthropic/claude-haiku-4-5",
            "--image",
            "base",
            "--out",
            str(tmp_path / "run"),
            env={"ANTHROPIC_BASE_URL": anthropic_fake.base_url, "ANTHROPIC_API_KEY": KEY_A},
        )
        main_requests = openai_fake.completion_requests()
        gate_requests = anthropic_fake.completion_requests()
    assert done.returncode == 0, done.stderr
    assert len(main_requests) == 4 and len(gate_requests) == 1
    assert {sent_key(r) for r in main_requests} == {KEY_O}
    assert sent_key(gate_requests[0]) == KEY_A
    assert_no_key_in(tmp_path / "run", KEY_A, KEY_O)


def test_model_settings_records_and_provider_split():
    options = ModelConfig(
        api_key=KEY_A,
        base_url="http://127.0.0.1:1",
        provider="anthropic",
        extra_headers={"Authorization": "Bearer abcdefgh12345", "X-Trace": "visible"},
    )
    dumped = options.model_dump(mode="json")
    assert "api_key" not in dumped
    assert dumped["extra_headers"] == {"Authorization": REDACTED, "X-Trace": "visible"}
    other = options.for_provider("openai")
    assert other.api_key is None and other.base_url is None and other.extra_headers == {}
    assert options.for_provider("anthropic") is options
