"""The density benchmark (`bench/density.py`): its arithmetic, its stopping rule, its tasks and
model, the cgroup reading, and one small real run through the suite runner."""

from __future__ import annotations

import json

import pytest

from bench.density import (
    DensityOptions,
    Level,
    best_level,
    ideal_per_hour,
    main,
    median_breakdown,
    run_level,
    should_stop,
    task_breakdown,
    tasks_per_hour,
)
from bench.density_bench import level_row
from bench.density_memory import cgroup_folder, cpu_seconds, kernel_peak, working_set
from bench.density_tasks import ANSWER, DensityModels, agent_turns, write_tasks
from tasks.schema import load_task
from tests.conftest import require_image


def level(k: int, per_hour: float, available: float | None = 20_000, peak: float = 300) -> Level:
    return Level(
        k=k,
        wall_s=k * 3600 / per_hour,
        tasks_per_hour=per_hour,
        ideal_per_hour=per_hour,
        ratio=1.0,
        mean_score=1.0,
        statuses={"completed": k},
        memory={"task_peak_max_mib": peak, "view_peak_mib": 20},
        cpu_s_per_task={"harness": 0.2, "sandboxes": 3.0, "engine": 0.5},
        breakdown_s={"start": 1.0},
        host_min_available_mib=available,
        peak_live_sandboxes=k,
    )


def test_throughput_and_the_ideal():
    assert tasks_per_hour(4, 120.0) == pytest.approx(120.0)
    # One task alone takes 60 s: four at once would ideally finish 240 an hour.
    assert ideal_per_hour(4, 60.0) == pytest.approx(240.0)
    with pytest.raises(ValueError):
        tasks_per_hour(1, 0.0)


def test_the_breakdown_follows_the_event_times():
    events = [
        {"event": "setup_done", "agent": "harness", "time": 103.0, "sandbox_ready_at": 101.5},
        {"event": "task", "agent": "main", "time": 103.1},
        {"event": "model_turn", "agent": "main", "time": 108.0},
        {"event": "model_turn", "agent": "main", "time": 113.0},  # the finish call
        {"event": "task", "agent": "gate-1", "time": 115.0},
        {"event": "model_turn", "agent": "gate-1", "time": 120.0},
        {"event": "gate_round", "agent": "harness", "time": 120.2},
        {"event": "agent_stopped", "agent": "harness", "time": 120.4},
        {"event": "result", "agent": "harness", "time": 121.0},
    ]
    phases = task_breakdown(events, {"duration_s": 21.0})  # began at 100.0
    assert phases == pytest.approx(
        {
            "start": 1.5,
            "setup": 1.5,
            "turns": 10.0,
            "gate_snapshot": 2.0,
            "gate_model": 5.2,
            "checker": 0.8,
        }
    )
    assert sum(phases.values()) == pytest.approx(21.0)
    with pytest.raises(ValueError, match="setup_done"):
        task_breakdown(events[1:], {"duration_s": 21.0})


def test_median_breakdown_is_per_phase():
    runs = [
        dict.fromkeys(("start", "setup", "turns", "gate_snapshot", "gate_model", "checker"), v)
        for v in (1.0, 5.0, 2.0)
    ]
    assert set(median_breakdown(runs).values()) == {2.0}


def test_the_benchmark_goes_on_while_throughput_rises():
    options = DensityOptions()
    assert should_stop([level(1, 100), level(2, 190)], 4, options) is None
    reason = should_stop([level(1, 100), level(2, 190), level(4, 195)], 8, options)
    assert reason and "stopped rising at K=4" in reason
    # A fall is a stop too, and the best K is the one before it.
    levels = [level(1, 100), level(2, 190), level(4, 150)]
    assert "stopped rising" in should_stop(levels, 8, options)
    assert best_level(levels).k == 2


def test_the_benchmark_stops_before_memory_runs_short():
    options = DensityOptions(headroom_mib=2048)
    # K=8 -> 16 adds 8 sandboxes of 300 + 20 MiB: 2,560 MiB plus the headroom.
    enough = [level(1, 100), level(8, 700, available=5000)]
    assert should_stop(enough, 16, options) is None
    short = [level(1, 100), level(8, 700, available=4000)]
    reason = should_stop(short, 16, options)
    assert reason and "memory runs short" in reason and "K=16" in reason


def test_level_row_ratio_is_throughput_over_ideal():
    at_four = level(4, 300)
    at_four.ideal_per_hour = 400
    bench_row = level_row(at_four, DensityOptions(), single_task_s=36.0)  # ideal 400/h at K=4
    assert bench_row.ratio == pytest.approx(0.75)
    assert bench_row.runs == 4 and bench_row.details["k"] == 4
    assert "300 tasks/h vs ideal 400" in bench_row.note


def test_tasks_alternate_calc_and_chrome_and_load(tmp_path):
    paths = write_tasks(tmp_path, 3)
    tasks = [load_task(p) for p in paths]
    assert [t.id for t in tasks] == ["density-calc-001", "density-chrome-002", "density-calc-003"]
    assert [s.type for s in tasks[0].config] == ["download", "open"]
    assert [s.type for s in tasks[1].config] == ["download", "launch"]
    assert (tmp_path / "book.xlsx").stat().st_size > 0


def test_the_model_looks_answers_and_finishes():
    turns = agent_turns(5)
    names = [turn["tool_calls"][0]["name"] for turn in turns]
    assert names == ["bash", "bash", "bash", "bash", "finish"]
    looks = [turn["tool_calls"][0]["input"]["command"] for turn in turns[:3]]
    assert len(set(looks)) == 3  # never one command repeated: that is a stall
    assert ANSWER in turns[-2]["tool_calls"][0]["input"]["command"]
    with pytest.raises(ValueError):
        agent_turns(3)  # the finish rule wants three steps before finish
    model = DensityModels(wait_s=0.0, turns=4)
    assert len(model.agent(None).turns) == 4


def test_cgroup_figures_v1_and_v2(tmp_path):
    v1 = tmp_path / "memory" / "docker" / "abc"
    v1.mkdir(parents=True)
    (v1 / "memory.usage_in_bytes").write_text("1000\n")
    (v1 / "memory.max_usage_in_bytes").write_text("5000\n")
    (v1 / "memory.stat").write_text("cache 900\ntotal_inactive_file 300\n")
    assert cgroup_folder("abc", tmp_path) == v1
    assert working_set(v1) == 700
    assert kernel_peak(v1) == 5000
    v2 = tmp_path / "system.slice" / "docker-def.scope"
    v2.mkdir(parents=True)
    (v2 / "memory.current").write_text("2000\n")
    (v2 / "memory.peak").write_text("4000\n")
    (v2 / "memory.stat").write_text("anon 1500\ninactive_file 500\n")
    (v2 / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 1\n")
    assert cgroup_folder("def", tmp_path) == v2
    assert working_set(v2) == 1500
    assert cpu_seconds("def", tmp_path) == pytest.approx(2.5)
    assert cgroup_folder("gone", tmp_path) is None
    assert working_set(tmp_path / "gone") is None


def test_bad_levels_are_one_sentence(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--levels", "1,two"])
    assert exit_info.value.code == 2
    assert "--levels takes numbers like 1,2,4" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--levels", "0"])
    with pytest.raises(SystemExit):
        main(["--turns", "3"])


@pytest.mark.slow
def test_a_small_real_density_run(tmp_path):
    """K=2 desktops (Calc and Chrome) through the suite runner, short turns: both score 1 through
    the gate and the checker, and every figure is measured."""
    require_image("desktop")
    options = DensityOptions(levels=[2], wait_s=0.2, turns=4)
    result = run_level(2, options, tmp_path, single_task_s=None)
    assert result.mean_score == 1.0, result.notes
    assert result.statuses == {"completed": 2}
    assert result.memory["task_sandboxes"] == 2 and result.memory["gate_views"] >= 2
    assert 20 < result.memory["task_peak_mib"] < 4096
    assert result.memory["task_mean_mib"] <= result.memory["task_peak_max_mib"]
    assert set(result.breakdown_s) == {
        "start",
        "setup",
        "turns",
        "gate_snapshot",
        "gate_model",
        "checker",
    }
    assert all(seconds >= 0 for seconds in result.breakdown_s.values())
    # The model's waits are in the turns: 4 turns of 0.2 s at least.
    assert result.breakdown_s["turns"] >= 0.8
    assert result.ratio == 1.0  # K's own wall time is the ideal when no single run is given
    assert result.cpu_s_per_task["sandboxes"] > 0
    json.dumps(result.__dict__)


def test_waves_count_every_task():
    """K=2 over 3 waves: six tasks in 120 s at two a time, each alone 30 s."""
    two = level(2, 180)
    two.wall_s = 120.0
    bench_row = level_row(two, DensityOptions(waves=3), single_task_s=30.0)
    assert bench_row.runs == 6
    assert bench_row.median_s == pytest.approx(20.0)  # 120 s / 6 tasks
    assert bench_row.ratio == pytest.approx(0.75)  # ideal 15 s per task at K=2
