"""`stateact report RUN_A RUN_B`: pairing, order, totals, the seeded paired bootstrap interval, the
terminal table and the bad inputs (one sentence, exit 2)."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from harness.reports.compare import bootstrap_interval, compare
from tests.conftest import stateact
from tests.report_helpers import fake_results, write_fake_suite


def line(task_id: str, score: float, **extra) -> dict:
    return {
        "task_id": task_id,
        "score": score,
        "success": score == 1.0,
        "status": "completed",
        "cost_usd": 0.1,
        "model_turns": 3,
        **extra,
    }


def test_regressions_then_improvements_then_one_sided_then_same():
    a = [
        line("same", 1.0),
        line("up", 0.0),
        line("down", 1.0),
        line("small-down", 1.0),
        line("gone", 1.0),
    ]
    b = [
        line("same", 1.0),
        line("up", 1.0),
        line("down", 0.0),
        line("small-down", 0.5),
        line("new", 0.0),
    ]
    comparison = compare(a, b)
    assert [p.task_id for p in comparison.pairs] == [
        "down",
        "small-down",
        "up",
        "gone",
        "new",
        "same",
    ]
    assert comparison.paired == 4
    # successes in both: A 3 of 4 (same, down, small-down), B 2 of 4 (same, up)
    assert comparison.success_difference == pytest.approx(-0.25)
    assert comparison.counts()["regression"] == 2 and comparison.counts()["improvement"] == 1


def test_bootstrap_interval_is_seeded_and_brackets_the_difference():
    a = [i % 3 == 0 for i in range(60)]
    b = [i % 2 == 0 for i in range(60)]
    first, second = bootstrap_interval(a, b), bootstrap_interval(a, b)
    assert first == second  # the same runs always give the same interval
    difference = (sum(b) - sum(a)) / 60
    low, high = first
    assert low < difference < high and high - low < 0.5
    assert bootstrap_interval([True] * 9, [True] * 9) == (0.0, 0.0)
    assert bootstrap_interval([], []) is None
    # It agrees with the normal approximation of a paired difference, d ± 1.96·sd/√n.
    diffs = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    sd = statistics.pstdev(diffs)
    half = 1.96 * sd / math.sqrt(len(diffs))
    assert low == pytest.approx(difference - half, abs=0.04)
    assert high == pytest.approx(difference + half, abs=0.04)
    other = bootstrap_interval(a, b, seed=7)
    assert abs((other[0] + other[1]) - (low + high)) < 0.1


def test_cli_compares_two_suites_in_the_terminal_and_as_html(tmp_path):
    a = fake_results(30, seed=3)
    b = [dict(r) for r in a]
    b[4].update(score=0.0, success=False, status="gate_rejected")
    b[4]["error"] = "\x1b[2Jgate round 9: passed"
    write_fake_suite(tmp_path / "a", a)
    write_fake_suite(tmp_path / "b", b)
    out = tmp_path / "cmp" / "compare.html"
    done = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"), "--html", str(out))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    first_row = next(row for row in done.stdout.splitlines() if a[4]["task_id"] in row)
    if a[4]["score"] > 0:
        assert "regression" in first_row
    assert "paired bootstrap interval" in done.stdout.replace("\n", " ")
    page = out.read_text()
    assert a[4]["task_id"] in page
    # Links from the page reach the trajectories of both suites.
    assert "../b/runs/" in page and "../a/runs/" in page
    as_json = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"), "--json")
    data = json.loads(as_json.stdout)
    assert data["paired_tasks"] == 30 and len(data["interval"]) == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing-a", "missing-b"], "is not a directory"),
        (["{tmp}", "{tmp}"], "neither a suite directory"),
        (["{tmp}", "--html", "{tmp}/x.html"], "needs two suite directories"),
        (["{suite}", "{suite}", "--html", "{tmp}"], "is a folder"),
    ],
)
def test_cli_bad_inputs_say_one_sentence_and_exit_2(tmp_path, args, message):
    write_fake_suite(tmp_path / "s", fake_results(2))
    filled = [a.format(tmp=tmp_path, suite=tmp_path / "s") for a in args]
    done = stateact("report", *filled)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_hand_edited_and_cut_short_results_still_compare(tmp_path):
    for name, cost in (("a", "abc"), ("b", None)):
        (tmp_path / name).mkdir()
        lines = [
            json.dumps(line("t1", 1.0, cost_usd=cost, model_turns="x")),
            '{"task_id": "t2", "sc',
        ]
        (tmp_path / name / "results.jsonl").write_text("\n".join(lines))
    done = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["paired_tasks"] == 1 and data["totals_a"]["cost_usd"] == 0.0


def test_two_single_runs_compare_as_suites_of_one(tmp_path):
    for name, score in (("a", 0.0), ("b", 1.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(line("t1", score)))
    done = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == [
        {"task_id": "t1", "change": "improvement", "score_a": 0.0, "score_b": 1.0}
    ]
    (tmp_path / "a" / "result.json").write_text("[1, 2]")
    bad = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"))
    assert bad.returncode == 2 and "does not hold a result object" in bad.stderr
