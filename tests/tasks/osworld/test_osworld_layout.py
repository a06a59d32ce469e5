"""A suite's OSWorld-layout results read by OSWorld's tabulation (re-implemented in
`osworld_tabulation`): the same counts and mean scores as StateAct's own summary."""

from __future__ import annotations

import json

import pytest

from harness.reports.osworld_layout import result_folder, write_osworld_results
from tests.osworld_tabulation import finished_examples, tabulate
from tests.report_helpers import fake_results, write_fake_suite

OSWORLD_DOMAINS = (
    "chrome",
    "gimp",
    "libreoffice_calc",
    "libreoffice_impress",
    "libreoffice_writer",
    "multi_apps",
    "os",
    "thunderbird",
    "vlc",
    "vs_code",
)


def check_tabulation(out, results: list[dict], summary: dict, control, preset, model) -> dict:
    """OSWorld's figures over `out/results` equal StateAct's summary; returns the tabulation."""
    for path in (out / "results").rglob("result.txt"):
        float(path.read_text())  # every score parses as a number, never by its truth
    table = tabulate(control, model, preset, str(out / "results"))
    assert table is not None
    assert len(table["all"]) == summary["tasks"] == len(results)
    assert sum(table["all"]) / len(table["all"]) == pytest.approx(summary["mean_score"], abs=1e-6)
    for domain, figures in summary["by_domain"].items():
        scores = table["domains"][domain]
        assert len(scores) == figures["tasks"]
        assert sum(scores) / len(scores) == pytest.approx(figures["mean_score"], abs=1e-6)
        assert f"Domain: {domain} Runned: {figures['tasks']} Success Rate:" in "\n".join(
            table["lines"]
        )
    finished = finished_examples(control, model, preset, str(out / "results"))
    assert sum(len(v) for v in finished.values()) == len(results)
    return table


def osworld_like(count: int) -> list[dict]:
    """Results of OSWorld tasks run by StateAct: OSWorld's domains, uuid-like task ids."""
    results = fake_results(count, seed=5)
    for n, line in enumerate(results):
        task_id = f"{n:08x}-0000-4000-8000-{n:012x}"
        line.update(task_id=task_id, domain=OSWORLD_DOMAINS[n % 10], run_dir=f"runs/{task_id}")
    return results


def test_osworld_tabulation_reads_a_run_of_osworld_tasks_unchanged(tmp_path):
    results = osworld_like(40)
    results[3]["score"] = None  # crashed before scoring: 0 for both
    summary = write_fake_suite(tmp_path, results, screenshots=True)
    write_osworld_results(tmp_path, results)
    table = check_tabulation(tmp_path, results, summary, "stateact", "full", "script_generated")
    assert table["stopped"] is None  # all eight grouped domains are there
    office = [r for r in results if r["domain"].startswith("libreoffice_")]
    rate = sum(r["score"] or 0.0 for r in office) / len(office) * 100
    assert f"Office Success Rate: {rate}" in "\n".join(table["lines"])
    assert table["lines"][-1].startswith("Runned: 40 Current Success Rate:")
    folder = result_folder(tmp_path, results[0])
    steps = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    assert [s["step_num"] for s in steps] == [1, 2] and steps[-1]["done"] is True
    assert steps[0]["action"] == {"tool": "bash", "input": {"command": "ls"}}
    shot = folder / steps[0]["screenshot_file"]
    assert shot.is_file() and shot.read_bytes()[:4] == b"\x89PNG"
    assert steps[1]["screenshot_file"] is None
    # Written again (a resumed suite) beside the all_result.json the tabulation left: the same.
    write_osworld_results(tmp_path, results)
    check_tabulation(tmp_path, results, summary, "stateact", "full", "script_generated")


def test_a_suite_without_osworld_domains_tabulates_per_domain(tmp_path):
    results = fake_results(24, seed=6)  # calc, writer, impress, os, db, x, gui, web
    summary = write_fake_suite(tmp_path, results)
    write_osworld_results(tmp_path, results)
    table = check_tabulation(tmp_path, results, summary, "stateact", "full", "script_generated")
    # Like any OSWorld run without all eight grouped domains, the original stops at its groups.
    assert table["stopped"] == "libreoffice_calc"


def test_hostile_names_stay_single_folders_inside_results(tmp_path):
    line = fake_results(1)[0]
    line.update(task_id="../../etc/x", domain="/abs", model="a/../../b", run_dir="../../outside")
    write_osworld_results(tmp_path, [line])
    written = [p for p in tmp_path.rglob("result.txt")]
    assert len(written) == 1
    assert written[0].resolve().is_relative_to((tmp_path / "results").resolve())
    assert len(written[0].relative_to(tmp_path / "results").parts) == 6
    assert (written[0].parent / "traj.jsonl").read_text() == ""  # the run folder was refused
