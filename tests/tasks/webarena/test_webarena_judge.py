"""The `--judge-model` judge of WebArena's fuzzy_match: called at temperature 0 as WebArena calls
it (the request the fake provider received says so, on both clients), and what it costs is part of
the task's recorded cost, kept apart as the result's judge fields; each call is a `judge_call` event
of the trajectory with what the judge read and answered."""

from __future__ import annotations

import json

import pytest
import yaml

from harness.kernel.core import StateActError, Usage
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord
from harness.models import make_model
from harness.models.config import ModelConfig
from harness.models.judge import judge_model
from harness.run.config import RunConfig
from harness.run.outcome import TaskOutcome
from harness.runner import _score
from tasks.schema import load_task
from tasks.webarena.deployment import configure, use_judge
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

HELLO = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
PRICES = {"input": 3.0, "output": 15.0}  # USD per million tokens, so the fake's usage has a cost
CLIENTS = [
    (
        FakeAnthropicServer,
        "anthropic/claude-sonnet-4-5",
        {"input_tokens": 1000, "output_tokens": 20},
    ),
    (FakeOpenAIServer, "openai/gpt-4o", {"prompt_tokens": 1000, "completion_tokens": 20}),
]


pytestmark = pytest.mark.usefixtures("fresh_deployment")


def options_for(server, **more) -> ModelConfig:
    return ModelConfig(base_url=server.base_url, api_key="test-key", prices=PRICES, **more)


def test_the_openai_compatible_judge_request_carries_temperature_0():
    with FakeOpenAIServer([{"text": "correct"}, {"text": "ok"}]) as server:
        options = options_for(server, temperature=0.7)
        assert judge_model("openai/gpt-4o", options).complete("system", "right?") == "correct"
        make_model("openai/gpt-4o", options).complete("system", HELLO, [])
        judged, main = (r["json"] for r in server.completion_requests())
    assert judged["temperature"] == 0
    assert main["temperature"] == 0.7  # the run's own model keeps its setting


def test_the_anthropic_judge_is_called_without_thinking_or_the_refused_temperature():
    with FakeAnthropicServer([{"text": "correct"}]) as server:
        options = options_for(server, temperature=0.7, thinking_budget=2048)
        assert judge_model("anthropic/claude-sonnet-4-5", options).complete("s", "ok?") == "correct"
        (judged,) = (r["json"] for r in server.completion_requests())
        assert "temperature" not in judged and "thinking" not in judged
        plain = options.model_copy(update={"thinking_budget": None})
        with pytest.raises(StateActError, match="takes no sampling temperature"):
            make_model("anthropic/claude-sonnet-4-5", plain).complete("system", HELLO, [])
        assert len(server.completion_requests()) == 1  # refused before any request


def fuzzy_task(tmp_path, fuzzy: bool):
    """A WebArena string_match task, its reference judged by the model when `fuzzy`."""
    answers = {"fuzzy_match": ["$365.42"]} if fuzzy else {"must_include": ["365.42"]}
    item = {
        "task_id": 7001 if fuzzy else 7002,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__",
        "require_login": False,
        "storage_state": None,
        "require_reset": False,
        "intent": "Tell me the total cost of my latest cancelled order?",
        "eval": {
            "eval_types": ["string_match"],
            "reference_answers": answers,
            "reference_url": "",
            "program_html": [],
            "string_note": "",
        },
    }
    path = tmp_path / f"{item['task_id']}.json"
    path.write_text(json.dumps(item))
    return load_task(path)


def scored(tmp_path, task, answer: str) -> dict:
    """result.json's content after the runner scored `answer`, the agent having spent $0.5; the
    trajectory's events are in `tmp_path / "run"`."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": {"shopping": "http://127.0.0.1:9"}}))
    configure(sites, 1)
    stats = RunStats(usage=Usage(input_tokens=100, output_tokens=10, cost_usd=0.5))
    outcome = TaskOutcome(task.id)
    outcome.answer = answer
    record = RunRecord(tmp_path / "run")
    config = RunConfig(model="script/none", cache_dir=str(tmp_path))
    _score(task, None, config, outcome, stats, record)
    record.close()
    return outcome.result(stats)


def judge_events(tmp_path) -> list[dict]:
    lines = (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["event"] == "judge_call"]


@pytest.mark.parametrize(("fake", "spec", "usage"), CLIENTS)
def test_the_judges_cost_is_in_the_tasks_cost_and_kept_apart(tmp_path, fake, spec, usage):
    with fake([{"text": "correct", "usage": usage}]) as server:
        use_judge(judge_model(spec, options_for(server)))
        result = scored(tmp_path, fuzzy_task(tmp_path, fuzzy=True), "It cost $365.42.")
        assert len(server.completion_requests()) == 1
    judge_cost = (1000 * 3.0 + 20 * 15.0) / 1e6
    assert result["score"] == 1.0
    assert result["judge_cost_usd"] == pytest.approx(judge_cost)
    assert result["cost_usd"] == pytest.approx(0.5 + judge_cost)
    assert (result["judge_input_tokens"], result["judge_output_tokens"]) == (1000, 20)
    assert result["input_tokens"] == 1100 and result["output_tokens"] == 30
    (event,) = judge_events(tmp_path)
    assert event["agent"] == "judge" and event["answer"] == "correct"
    assert "student answer: it cost $365.42." in event["user"]  # as WebArena lowercases it
    assert (event["input_tokens"], event["output_tokens"]) == (1000, 20)
    assert event["cost_usd"] == pytest.approx(judge_cost)


def test_a_failed_judge_call_is_recorded_without_an_answer(tmp_path):
    with FakeOpenAIServer([{"text": ""}]) as server:
        use_judge(judge_model("openai/gpt-4o", options_for(server)))
        result = scored(tmp_path, fuzzy_task(tmp_path, fuzzy=True), "It cost $365.42.")
    assert result["status"] == "evaluation_error", result
    (event,) = judge_events(tmp_path)
    assert event["answer"] == "" and event["model"]


def test_a_task_no_judge_scored_has_no_judge_cost(tmp_path):
    with FakeAnthropicServer([]) as server:
        use_judge(judge_model("anthropic/claude-sonnet-4-5", options_for(server)))
        result = scored(tmp_path, fuzzy_task(tmp_path, fuzzy=False), "It cost $365.42.")
        assert server.completion_requests() == []
    assert result["score"] == 1.0 and result["cost_usd"] == 0.5
    assert "judge_cost_usd" not in result and judge_events(tmp_path) == []
