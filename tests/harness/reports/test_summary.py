"""Suite summary figures on hand-made results."""

from __future__ import annotations

import pytest

from harness.reports.summary import gate_confusion, gui_use, summarize, summary_line


def result(
    task_id,
    score,
    status="completed",
    *,
    domain="calc",
    cost=0.0,
    gate_rounds=1,
    gate_passed=True,
    main_steps=4,
    gui=0,
    preset="full",
    turns=5,
    tools=6,
):
    return {
        "task_id": task_id,
        "score": score,
        "success": score == 1.0,
        "status": status,
        "error": None,
        "cost_usd": cost,
        "model_turns": turns,
        "main_turns": turns - 1,
        "tool_uses": tools,
        "gate_rounds": gate_rounds,
        "gate_passed": gate_passed,
        "domain": domain,
        "preset": preset,
        "control": "stateact",
        "main_steps": main_steps,
        "gui_delegations": gui,
        "duration_s": 2.0,
    }


RESULTS = [
    result("a", 1.0, domain="calc", cost=0.10, main_steps=10, gui=2),
    result("b", 0.5, domain="calc", cost=0.30, gate_passed=True),
    result("c", 1.0, "gate_rejected", domain="writer", cost=0.20, gate_rounds=3, gate_passed=False),
    result(
        "d",
        0.0,
        "gate_rejected",
        domain="writer",
        cost=0.40,
        gate_rounds=3,
        gate_passed=False,
        preset="no-act",
    ),
    result(
        "e",
        0.0,
        "invalid_task",
        domain="os",
        gate_rounds=0,
        gate_passed=None,
        main_steps=0,
        turns=0,
        tools=0,
    ),
    result(
        "f", None, "model_error", domain="os", gate_rounds=0, gate_passed=None, main_steps=6, gui=1
    ),
]


def test_success_rate_and_mean_score_count_unscored_tasks_as_zero():
    summary = summarize(RESULTS)
    assert summary["tasks"] == 6
    assert summary["successes"] == 2
    assert summary["success_rate"] == pytest.approx(2 / 6, abs=1e-6)
    assert summary["mean_score"] == pytest.approx(2.5 / 6, abs=1e-6)
    assert summary["mean_cost_usd"] == pytest.approx(1.0 / 6, abs=1e-6)
    assert summary["total_cost_usd"] == pytest.approx(1.0, abs=1e-6)
    assert summary["mean_model_turns"] == pytest.approx(25 / 6, abs=1e-6)
    assert summary["mean_tool_uses"] == pytest.approx(30 / 6, abs=1e-6)


def test_per_domain_and_per_mode_breakdowns():
    summary = summarize(RESULTS)
    assert list(summary["by_domain"]) == ["calc", "os", "writer"]
    calc = summary["by_domain"]["calc"]
    assert (calc["tasks"], calc["successes"], calc["mean_score"]) == (2, 1, 0.75)
    assert calc["mean_cost_usd"] == pytest.approx(0.2, abs=1e-6)
    assert summary["by_domain"]["os"]["success_rate"] == 0.0
    assert summary["by_mode"]["full/stateact"]["tasks"] == 5
    assert summary["by_mode"]["no-act/stateact"] == {
        "tasks": 1,
        "successes": 0,
        "success_rate": 0.0,
        "mean_score": 0.0,
        "mean_cost_usd": 0.4,
    }


def test_status_counts():
    assert summarize(RESULTS)["status_counts"] == {
        "completed": 2,
        "gate_rejected": 2,
        "invalid_task": 1,
        "model_error": 1,
    }


def test_gate_confusion_against_the_checker():
    assert gate_confusion(RESULTS) == {
        "reviewed": 4,
        "accepted_correct": 1,
        "accepted_below_1": 1,
        "rejected": 2,
        "rejected_but_correct": 1,
        "not_reviewed": 2,
    }


def test_gui_use_shares():
    gui = gui_use(RESULTS)
    assert gui["main_steps"] == 10 + 4 + 4 + 4 + 0 + 6
    assert gui["gui_delegations"] == 3
    assert gui["gui_step_share"] == pytest.approx(3 / 28, abs=1e-6)
    assert gui["tasks_using_gui"] == 2
    assert gui["task_share_using_gui"] == pytest.approx(2 / 6, abs=1e-6)


def test_empty_suite_and_summary_line():
    empty = summarize([])
    assert (
        empty["tasks"] == 0
        and empty["success_rate"] is None
        and empty["gui"]["gui_step_share"] is None
    )
    assert summary_line(empty).startswith("0 tasks")
    line = summary_line(summarize(RESULTS))
    assert "6 tasks" in line and "2/6" in line and "(33%)" in line and "$1.0000" in line
