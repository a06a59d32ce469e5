"""A 300-turn scripted run under a small context window: compaction bounds every request, keeps the
plan, and makes total input tokens grow linearly with turns."""

from __future__ import annotations

from harness.control.main_agent import MainAgent
from harness.models.scripted import ScriptedModel, estimate_tokens
from harness.run.config import RunConfig
from harness.run.context import RunContext

TURNS = 300
WINDOW = 12_000


def script() -> list:
    turns = [
        {
            "tool_calls": [
                {
                    "name": "plan",
                    "input": {
                        "items": [
                            {"text": "count to a thousand, in pieces", "status": "in_progress"}
                        ]
                    },
                }
            ]
        }
    ]
    for step in range(1, TURNS):
        turns.append(
            {
                "text": f"step {step}",
                "tool_calls": [{"name": "bash", "input": {"command": f"seq {step} {step + 250}"}}],
            }
        )
    return turns


def test_compaction_keeps_requests_bounded_and_growth_linear(local_sandbox, tmp_path):
    model = ScriptedModel(script(), context_window=WINDOW)
    config = RunConfig(model="script/x")
    config.loop.max_turns = TURNS + 10
    agent = MainAgent(RunContext(config=config, model=model, sandbox=local_sandbox))
    end = agent.run("Count with seq for a long time.")
    assert end.status == "script_exhausted"

    requests = [call for call in model.calls if call["tools"]]
    assert len(requests) == TURNS
    sizes = [estimate_tokens(call["system"], call["messages"]) for call in requests]
    assert max(sizes) < WINDOW, max(sizes)
    assert agent.compactor.compactions >= 10
    for call in requests[1:]:  # the plan rides on every request after it was written
        note = call["messages"][-1]["content"][-1]["text"]
        assert "<plan>" in note and "count to a thousand" in note
    assert "Count with seq" in requests[-1]["messages"][0]["content"][0]["text"]  # instruction kept

    first_half, second_half = sum(sizes[: TURNS // 2]), sum(sizes[TURNS // 2 :])
    assert second_half < 1.3 * first_half  # linear: each half costs about the same
    without_compaction = sum(sizes[0] + (sizes[5] - sizes[4]) * n for n in range(TURNS))
    assert sum(sizes) < without_compaction / 5  # quadratic growth would cost far more
    print(
        f"max request {max(sizes)} tokens, total {sum(sizes)} vs ~{without_compaction} uncompacted"
    )
