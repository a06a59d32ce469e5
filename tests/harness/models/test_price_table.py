"""Every provider priced from genai-prices' bundled table: OpenAI-compatible models get a cost and a
context window, an unknown model's cost is unknown (never 0), `--max-cost` on it is refused, and
`--price-in/--price-out` override the table (the fake OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

from harness.kernel.core import StateActError, Usage
from harness.models import ModelConfig
from harness.models.openai_model import OpenAIModel
from harness.models.pricing import TABLE, check_cost_cap, resolve_prices, table_entry
from tests.conftest import require_image, stateact
from tests.fakes import FakeOpenAIServer
from tests.harness.apps.test_suite_outdir import solve_turns
from tests.harness.apps.test_suite_runner import file_task, write_task


def test_openai_models_are_priced_and_windowed_from_the_table():
    prices = resolve_prices("openai", "gpt-4o", {})
    assert (prices.input, prices.output, prices.cache_read) == (2.5, 10.0, 1.25)
    assert prices.source == f"{TABLE}: openai/gpt-4o"
    model = OpenAIModel("gpt-4o", ModelConfig(base_url="http://127.0.0.1:9/v1"))
    assert model.context_window == 128_000  # not the old 32,768 for every openai/ model
    usage = model.usage_from({"prompt_tokens": 1000, "completion_tokens": 100})
    assert usage.priced and usage.cost_usd == pytest.approx((1000 * 2.5 + 100 * 10) / 1e6)
    windowed = OpenAIModel("gpt-4o", ModelConfig(base_url="x", context_window=50_000))
    assert windowed.context_window == 50_000  # --context-window still wins


def test_claude_tiers_apply_to_the_whole_request_above_200k():
    prices = resolve_prices("anthropic", "claude-sonnet-4-5", {})
    small = Usage(input_tokens=100_000, output_tokens=1000)
    large = Usage(input_tokens=300_000, output_tokens=1000)
    assert prices.cost(small) == pytest.approx((100_000 * 3 + 1000 * 15) / 1e6)
    assert prices.cost(large) == pytest.approx((300_000 * 6 + 1000 * 22.5) / 1e6)
    assert table_entry("anthropic", "claude-sonnet-4-5").context_window == 200_000


def test_an_unknown_model_costs_unknown_not_zero_and_a_cap_on_it_is_refused():
    model = OpenAIModel("my-local-llama", ModelConfig(base_url="http://127.0.0.1:9/v1"))
    assert model.prices is None
    usage = model.usage_from({"prompt_tokens": 1000, "completion_tokens": 100})
    assert usage.priced is False and usage.cost_usd == 0.0
    total = Usage(cost_usd=0.5)
    total.add(usage)
    assert total.priced is False  # one unpriced call makes the run's cost unknown
    with pytest.raises(StateActError, match="--max-cost cannot be enforced: openai/my-local-llama"):
        check_cost_cap(model, "openai/my-local-llama", 0.01)
    check_cost_cap(model, "openai/my-local-llama", None)  # no cap: fine, the cost is just unknown
    given = OpenAIModel(
        "my-local-llama", ModelConfig(base_url="x", prices={"input": 0.2, "output": 0.4})
    )
    assert given.prices.source == "--price-in/--price-out"
    assert given.usage_from({"prompt_tokens": 10**6, "completion_tokens": 10**6}).cost_usd == 0.6
    half = OpenAIModel("my-local-llama", ModelConfig(base_url="x", prices={"input": 0.2}))
    assert half.prices is None  # an output price is still unknown


def test_max_cost_on_an_unpriced_model_exits_2_in_one_sentence(tmp_path):
    task = tmp_path / "t.json"
    task.write_text(json.dumps(file_task("t", "hello")))
    done = stateact(
        "run",
        str(task),
        "--model",
        "openai/my-local-llama",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--max-cost",
        "0.5",
        "--out",
        str(tmp_path / "run"),
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "stateact: error: --max-cost cannot be enforced: openai/my-local-llama has no price in "
        f"{TABLE} and none was given, so its cost is unknown; give --price-in and --price-out "
        "(USD per million tokens)."
    ]
    assert not (tmp_path / "run").exists()


def run_args(task, out, base_url, *extra):
    return [
        "run",
        str(task),
        "--model",
        "openai/gpt-4o",
        "--base-url",
        base_url,
        "--preset",
        "no-verify",
        "--image",
        "base",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.docker
@pytest.mark.slow
def test_gpt_4o_against_the_fake_server_costs_from_the_table_and_max_cost_stops_it(tmp_path):
    require_image("base")
    task = write_task(tmp_path / "suite", file_task("t-os-001", "hello"))
    with FakeOpenAIServer(solve_turns()) as server:
        done = stateact(*run_args(task, tmp_path / "a", server.base_url))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "a" / "result.json").read_text())
    assert result["status"] == "completed" and result["score"] == 1.0
    # four turns of the fake's 10 prompt + 5 completion tokens at $2.5 / $10 per million
    assert (
        result["cost_usd"] == pytest.approx(4 * (10 * 2.5 + 5 * 10) / 1e6)
        and result["cost_usd"] > 0
    )

    big = [
        {**turn, "usage": {"prompt_tokens": 100_000, "completion_tokens": 1000}}
        for turn in solve_turns()
    ]
    with FakeOpenAIServer(big) as server:
        capped = stateact(*run_args(task, tmp_path / "b", server.base_url, "--max-cost", "0.5"))
        served = server.served
    assert capped.returncode == 1
    result = json.loads((tmp_path / "b" / "result.json").read_text())
    assert result["status"] == "cost_limit" and "0.5" in result["error"]
    assert served == 2  # $0.26 a turn: the second turn crosses $0.50 and the run stops there
    assert result["cost_usd"] == pytest.approx(2 * (100_000 * 2.5 + 1000 * 10) / 1e6)

    with FakeOpenAIServer(solve_turns()) as server:
        unknown = stateact(
            *run_args(task, tmp_path / "c", server.base_url)[:3],
            "openai/my-local-llama",
            *run_args(task, tmp_path / "c", server.base_url)[4:],
        )
    assert unknown.returncode == 0, unknown.stderr
    assert json.loads((tmp_path / "c" / "result.json").read_text())["cost_usd"] is None
    assert "cost unknown" in unknown.stderr
