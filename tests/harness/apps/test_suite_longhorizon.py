"""The bundled long-horizon suite: task files are complete, fixtures build, and in a real desktop
sandbox the untouched state scores below 1 while each reference solution scores exactly 1."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from tasks.evaluate import FAIL_ACTION, evaluate
from tasks.schema import load_task
from tasks.suites.longhorizon.build import STAMP_NAME, SUITE_DIR, ensure_fixtures
from tests.conftest import require_image

TASK_DIR = SUITE_DIR / "tasks"
SOLUTION_DIR = SUITE_DIR / "solutions"
TASK_IDS = sorted(p.stem for p in TASK_DIR.glob("*.json"))
# Setup steps that only matter to an agent watching the screen; the checks read files, so tests skip
# them.
SCREEN_ONLY_STEPS = {"open", "activate_window", "sleep"}


@pytest.fixture(scope="module", autouse=True)
def fixtures_built() -> Path:
    return ensure_fixtures()


def is_infeasible(task) -> bool:
    return task.evaluator.funcs == ["infeasible"]


def test_suite_has_the_promised_mix():
    assert len(TASK_IDS) >= 42
    kinds = Counter(tid.split("-")[1] for tid in TASK_IDS)
    assert kinds["calc"] >= 12 and kinds["writer"] >= 6 and kinds["impress"] >= 5
    assert kinds["os"] >= 5 and kinds["db"] >= 4 and kinds["x"] >= 5
    assert kinds["gui"] >= 3 and kinds["web"] >= 3 and kinds["inf"] >= 3
    partial = [
        tid for tid in TASK_IDS if load_task(TASK_DIR / f"{tid}.json").stateact["partial_credit"]
    ]
    assert len(partial) >= 4


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_file_is_complete(task_id):
    task = load_task(TASK_DIR / f"{task_id}.json")
    raw = json.loads((TASK_DIR / f"{task_id}.json").read_text())
    assert (
        task.id == task_id and task.snapshot == "stateact" and task.source == "stateact-longhorizon"
    )
    assert raw["proxy"] is False and raw["possibility_of_env_change"] == "low"
    assert set(task.stateact) == {"needs", "tags", "partial_credit"} and task.stateact["needs"]
    assert "/home/user/" in task.instruction
    for step in task.config:
        for item in step.parameters.get("files", []):
            assert (TASK_DIR / item["url"]).is_file(), item["url"]
            assert item["path"].startswith("/home/user/")
    specs = task.evaluator.aligned("result") + task.evaluator.aligned("expected")
    for spec in filter(None, specs):
        if spec["type"] == "local_file":
            assert (TASK_DIR / spec["path"]).is_file(), spec["path"]
    assert (SOLUTION_DIR / f"{task_id}.sh").is_file() != is_infeasible(task)


def test_ensure_fixtures_is_cheap_when_current():
    stamp = SUITE_DIR / STAMP_NAME
    before = stamp.stat().st_mtime_ns
    started = time.perf_counter()
    ensure_fixtures()
    assert stamp.stat().st_mtime_ns == before
    assert time.perf_counter() - started < 0.5


def test_rebuild_gives_the_same_data(tmp_path):
    ensure_fixtures(tmp_path, force=True)
    for name in (
        "fixtures/lh-os-003/logs.tar",
        "fixtures/lh-db-001/price_changes.csv",
        "expected/lh-calc-006/contacts_clean.csv",
    ):
        assert (tmp_path / name).read_bytes() == (SUITE_DIR / name).read_bytes(), name


@pytest.fixture
def desktop_sandbox():
    require_image("desktop")
    from sandboxes import SandboxConfig, open_sandbox

    with open_sandbox(SandboxConfig(image="desktop", memory_mb=2048)) as sandbox:
        yield sandbox


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_solution_scores_one(task_id, desktop_sandbox, tmp_path):
    from tasks.getters import SandboxSource
    from tasks.setup import run_setup

    task = load_task(TASK_DIR / f"{task_id}.json")
    steps = [s for s in task.config if s.type not in SCREEN_ONLY_STEPS]
    run_setup(steps, desktop_sandbox, task, cache_dir=None, outputs_dir=tmp_path)
    source = SandboxSource(desktop_sandbox)

    untouched = evaluate(task, source, work_dir=tmp_path / "before")
    assert untouched.score < 1.0, untouched
    if is_infeasible(task):
        assert evaluate(task, source, final_action=FAIL_ACTION).score == 1.0
        return

    desktop_sandbox.copy_in(SOLUTION_DIR / f"{task_id}.sh", "/tmp/solution.sh")
    code, output = desktop_sandbox.exec(["bash", "/tmp/solution.sh"], timeout=180)
    assert code == 0, output[-2000:]
    solved = evaluate(task, source, work_dir=tmp_path / "after")
    assert solved.score == 1.0, solved


def test_embedded_references_match_the_fixtures():
    """Checkers that carry their expected values inline agree with the generator's own
    computation."""
    import csv

    import openpyxl

    from tasks.suites.longhorizon.gen_calc import kpi_values
    from tasks.suites.longhorizon.gen_misc import fleet_summary

    kpi_task = load_task(TASK_DIR / "lh-calc-012.json")
    book = openpyxl.load_workbook(SUITE_DIR / "fixtures/lh-calc-012/orders_kpi.xlsx")
    kpi = kpi_values([list(r) for r in book["Data"].iter_rows(min_row=2, values_only=True)])
    refs = {
        r["coordinate"]: r["props"]["value"]["ref"]
        for r in kpi_task.evaluator.options["rules"]
        if r.get("sheet_idx") == "RNKPI" and r["coordinate"].startswith("B")
    }
    assert refs == {
        "B1": kpi["total"],
        "B2": kpi["average"],
        "B3": kpi["top_region"],
        "B4": kpi["big_orders"],
    }

    fleet_task = load_task(TASK_DIR / "lh-os-004.json")
    text = (SUITE_DIR / "fixtures/lh-os-004/servers.csv").read_text()
    summary = fleet_summary(list(csv.reader(text.splitlines()))[1:])
    expect = fleet_task.evaluator.expected["rules"]["expect"]
    assert {e["key"][0]: e["ref"] for e in expect} == summary
