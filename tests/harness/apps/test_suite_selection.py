"""Task selection (--filter, --shuffle, --slice) and --trials with pass@1, its spread and pass@k."""

from __future__ import annotations

import json
import math

import pytest

from harness.apps.selection import Selection, SuiteOptions, pass_at_k, trial_stats
from harness.apps.suite import run_suite
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from tests.conftest import require_image, stateact
from tests.harness.apps.test_suite_runner import file_task, write_task

NAMES = [f"lh-{d}-00{n}" for d in ("calc", "writer", "os") for n in (1, 2)]


def test_filter_then_shuffle_then_slice():
    assert Selection(filter="calc|os").apply(NAMES, str) == [
        "lh-calc-001",
        "lh-calc-002",
        "lh-os-001",
        "lh-os-002",
    ]
    assert Selection(slice="1:3").apply(NAMES, str) == NAMES[1:3]
    assert Selection(slice=":2").apply(NAMES, str) == NAMES[:2]
    shuffled = Selection(shuffle=7).apply(NAMES, str)
    assert sorted(shuffled) == sorted(NAMES) and shuffled != NAMES
    assert shuffled == Selection(shuffle=7).apply(NAMES, str)  # the seed fixes the order
    assert (
        Selection(filter="writer", shuffle=7, slice=":1")
        .apply(NAMES, str)[0]
        .startswith("lh-writer")
    )
    for bad in (dict(filter="("), dict(slice="3"), dict(slice="a:b"), dict(trials=0)):
        with pytest.raises(StateActError):
            Selection(**bad)


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))
    assert pass_at_k(2, 1, 3) is None  # fewer trials than k
    rows = [
        {"task_id": "a", "trial": 1, "success": True},
        {"task_id": "a", "trial": 2, "success": False},
        {"task_id": "b", "trial": 1, "success": False},
        {"task_id": "b", "trial": 2, "success": False},
    ]
    stats = trial_stats(rows)
    assert stats["pass_at_1"] == 0.25 and stats["pass_at_k"] == {"1": 0.25, "2": 0.5}
    assert stats["pass_at_1_stderr"] == pytest.approx(0.25)  # shares 0.5 and 0: sd 0.354 / sqrt 2
    assert stats["trial_success_rates"] == {"1": 0.5, "2": 0.0}
    assert trial_stats([{"task_id": "a", "success": True}]) is None  # no trials: no block


def test_a_selection_that_leaves_nothing_is_refused(tmp_path):
    write_task(tmp_path / "suite", file_task("t-os-001", "hello"))
    with pytest.raises(StateActError, match="leaves none of the 1 task"):
        run_suite(
            [tmp_path / "suite"],
            RunConfig(model="script/oracle"),
            tmp_path / "out",
            suite_options=SuiteOptions(selection=Selection(filter="calc")),
        )


@pytest.mark.docker
@pytest.mark.slow
def test_trials_run_each_selected_task_k_times_and_report_pass_at_k(tmp_path):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    write_task(suite, file_task("t-os-001", "hello"), "echo hello > /home/user/out.txt\n")
    write_task(suite, file_task("t-os-002", "hello"), "echo nope > /home/user/out.txt\n")
    write_task(suite, file_task("t-calc-001", "hello"), "echo hello > /home/user/out.txt\n")
    done = stateact(
        "suite",
        str(suite),
        "--model",
        "script/oracle",
        "--image",
        "base",
        "--out",
        str(out),
        "--filter",
        "t-os",
        "--trials",
        "2",
        "--parallel",
        "2",
    )
    assert done.returncode == 0, done.stderr
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == [
        "t-os-001.trial-1",
        "t-os-001.trial-2",
        "t-os-002.trial-1",
        "t-os-002.trial-2",
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 4 and summary["trials"]["tasks"] == 2
    assert summary["trials"]["pass_at_1"] == 0.5 and summary["trials"]["pass_at_k"]["2"] == 0.5
    words = stateact("report", str(out))
    assert "pass@1 0.500 ± 0.500" in words.stdout
