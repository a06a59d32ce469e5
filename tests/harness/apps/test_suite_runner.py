"""`stateact suite`: discovery, dry runs, bad tasks scoring 0 while the suite goes on, resume,
the oracle, and report.html opened in headless Chromium inside the desktop sandbox."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from PIL import Image

from harness.apps.oracle import oracle_turns
from harness.apps.suite import discover_tasks, run_suite
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from tasks.schema import load_task
from tests.conftest import OSWORLD_EXAMPLES, REPO, listed_containers, require_image, stateact

BUNDLED = REPO / "tasks" / "suites" / "longhorizon"


def write_task(suite: Path, task: dict, solution: str | None = None) -> Path:
    (suite / "tasks").mkdir(parents=True, exist_ok=True)
    (suite / "solutions").mkdir(exist_ok=True)
    path = suite / "tasks" / f"{task.get('id', 'broken')}.json"
    path.write_text(json.dumps(task))
    if solution is not None:
        (suite / "solutions" / f"{task['id']}.sh").write_text(solution)
    return path


def file_task(task_id: str, text: str) -> dict:
    """Write `text` to /home/user/out.txt; checked by the file's content."""
    return {
        "id": task_id,
        "instruction": f"Write the word {text} into /home/user/out.txt.",
        "evaluator": {
            "func": "check_include_exclude",
            "result": {
                "type": "vm_command_line",
                "command": "cat /home/user/out.txt",
                "shell": True,
            },
            "expected": {"type": "rule", "rules": {"include": [text], "exclude": []}},
        },
    }


def sheet_task(task_id: str, sheet: str) -> dict:
    """Save /home/user/totals.xlsx; compared with a gold workbook on sheet `sheet`."""
    return {
        "id": task_id,
        "instruction": "Create /home/user/totals.xlsx with the header Total in A1 and 42 in A2 "
        "on a sheet named Totals.",
        "evaluator": {
            "func": "compare_table",
            "result": {"type": "vm_file", "path": "/home/user/totals.xlsx", "dest": "totals.xlsx"},
            "expected": {"type": "local_file", "path": "../gold/totals.xlsx", "dest": "gold.xlsx"},
            "options": {
                "rules": [
                    {"type": "sheet_data", "sheet_idx0": f"RN{sheet}", "sheet_idx1": "ENTotals"}
                ]
            },
        },
    }


WRITE_WORKBOOK = """python3 - <<'PY'
import openpyxl
wb = openpyxl.Workbook(); ws = wb.active; ws.title = "Totals"; ws["A1"] = "Total"; ws["A2"] = 42
wb.save("/home/user/totals.xlsx")
PY
"""


def gold_workbook(suite: Path) -> None:
    (suite / "gold").mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook()
    wb.active.title = "Totals"
    wb.active["A1"], wb.active["A2"] = "Total", 42
    wb.save(suite / "gold" / "totals.xlsx")


def results_by_id(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {line["task_id"]: line for line in map(json.loads, lines)}


# --- without Docker -------------------------------------------------------------------------------


def test_dry_run_over_the_osworld_examples_prints_369_lines():
    done = stateact("suite", str(OSWORLD_EXAMPLES), "--dry-run")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 369
    assert len({r["id"] for r in records}) == 369
    for record in records:
        assert isinstance(record["runnable"], bool)
        assert record["runnable"] or record["reason"]
    assert not any(r.get("reason", "").startswith("broken task file") for r in records)
    assert "369 task(s):" in done.stderr and "runnable" in done.stderr


def test_discovery_skips_index_files_and_fixture_json(tmp_path):
    assert (
        len(discover_tasks([OSWORLD_EXAMPLES.parent])) == 369
    )  # test_all.json and test_nogdrive.json are indexes
    bundled = discover_tasks([BUNDLED])
    assert bundled and all(p.parent.name == "tasks" for p in bundled)
    (tmp_path / "not-json.json").write_text("{oops")
    (tmp_path / "index.json").write_text(json.dumps({"calc": ["a", "b"]}))
    assert discover_tasks([tmp_path]) == [(tmp_path / "not-json.json").resolve()]
    with pytest.raises(StateActError, match="neither a task file nor a folder"):
        discover_tasks([tmp_path / "missing"])


def test_the_oracle_plays_plan_script_check_finish(tmp_path):
    task = load_task(
        write_task(tmp_path, file_task("t-os-001", "hello"), "echo hello > /home/user/out.txt\n")
    )
    names = [turn["tool_calls"][0]["name"] for turn in oracle_turns(task)]
    assert names == ["plan", "bash", "str_replace_based_edit_tool", "bash", "bash", "finish"]
    assert (
        oracle_turns(task)[2]["tool_calls"][0]["input"]["file_text"]
        == "echo hello > /home/user/out.txt\n"
    )
    assert "infeasible" not in oracle_turns(task)[-1]["tool_calls"][0]["input"]
    unsolved = load_task(write_task(tmp_path, file_task("t-os-002", "x")))
    with pytest.raises(StateActError, match="no reference solution for task t-os-002"):
        oracle_turns(unsolved)  # not "the agent declared a feasible task infeasible"
    impossible = file_task("t-os-003", "x")
    impossible["evaluator"] = {"func": "infeasible"}
    declared = oracle_turns(load_task(write_task(tmp_path, impossible)))
    assert declared[-1]["tool_calls"][0]["input"]["infeasible"] is True


def test_bad_and_unsupported_tasks_score_zero_and_the_suite_goes_on(tmp_path):
    suite, out = tmp_path / "suite", tmp_path / "out"
    write_task(suite, {"id": "no-instruction", "evaluator": {"func": "exact_match"}})
    (suite / "tasks" / "not-json.json").write_text("{this is not json")
    unknown = file_task("unknown-metric", "x")
    unknown["evaluator"]["func"] = "no_such_metric"
    write_task(suite, unknown)
    summary = run_suite([suite], RunConfig(model="script/oracle"), out)
    results = results_by_id(out)
    assert results["no-instruction"]["status"] == "invalid_task"
    assert "no 'instruction' field" in results["no-instruction"]["error"]
    assert (
        results["not-json"]["status"] == "invalid_task"
        and "not valid JSON" in results["not-json"]["error"]
    )
    assert results["unknown-metric"]["status"] == "unsupported"
    assert "metric not implemented: no_such_metric" in results["unknown-metric"]["error"]
    assert all(r["score"] == 0.0 and r["success"] is False for r in results.values())
    for task_id, line in results.items():
        on_disk = json.loads((out / line["run_dir"] / "result.json").read_text())
        assert on_disk["task_id"] == task_id and on_disk["score"] == 0.0
        assert (out / line["run_dir"] / "trajectory.html").is_file()
    assert summary["tasks"] == 3 and summary["success_rate"] == 0.0
    assert summary["status_counts"] == {"invalid_task": 2, "unsupported": 1}
    assert (out / "summary.json").is_file() and "no-instruction" in (
        out / "report.html"
    ).read_text()


def test_resume_keeps_finished_runs_and_clears_interrupted_ones(tmp_path):
    suite, out = tmp_path / "suite", tmp_path / "out"
    write_task(suite, file_task("finished", "hello"), "echo hello > /home/user/out.txt\n")
    write_task(
        suite, {"id": "interrupted", "evaluator": {"func": "exact_match"}}
    )  # fails to load: no sandbox
    finished = out / "runs" / "finished"
    finished.mkdir(parents=True)
    kept = {
        "task_id": "finished",
        "score": 1.0,
        "success": True,
        "status": "completed",
        "marker": "kept",
    }
    (finished / "result.json").write_text(json.dumps(kept))
    interrupted = out / "runs" / "interrupted"
    interrupted.mkdir(parents=True)
    (interrupted / "trajectory.jsonl").write_text('{"event": "task"}\n{"event": "model_tu')
    (out / "results.jsonl").write_text("")
    with pytest.raises(StateActError, match="--resume"):
        run_suite([suite], RunConfig(model="script/oracle"), out)
    summary = run_suite([suite], RunConfig(model="script/oracle"), out, resume=True)
    results = results_by_id(out)
    assert results["finished"]["marker"] == "kept"  # not rerun: a rerun would have needed a sandbox
    assert results["interrupted"]["status"] == "invalid_task"
    assert not (interrupted / "trajectory.jsonl").exists()
    assert summary["tasks"] == 2 and summary["successes"] == 1
    run_suite([suite], RunConfig(model="script/oracle"), out, resume=True)
    assert len((out / "results.jsonl").read_text().splitlines()) == 2  # no duplicate lines


def test_cli_errors_are_one_sentence(tmp_path):
    done = stateact("suite", str(tmp_path / "nowhere"), "--model", "script/oracle")
    assert (
        done.returncode == 2
        and "neither a task file nor a folder" in done.stderr
        and "Traceback" not in done.stderr
    )
    done = stateact("suite", str(OSWORLD_EXAMPLES))
    assert done.returncode == 2 and "--model is required" in done.stderr


# --- with Docker ----------------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_scripted_agents_breaking_the_checker_score_zero_with_the_reason(tmp_path):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    gold_workbook(suite)
    write_task(suite, file_task("good", "hello"), "echo hello > /home/user/out.txt\n")
    write_task(suite, sheet_task("bad-sheet-ref", "NoSuchSheet"), WRITE_WORKBOOK)
    write_task(
        suite,
        sheet_task("corrupt-xlsx", "Totals"),
        "head -c 3000 /dev/urandom > /home/user/totals.xlsx\n",
    )
    write_task(suite, sheet_task("right-xlsx", "Totals"), WRITE_WORKBOOK)
    config = RunConfig(model="script/oracle")
    config.sandbox.image = "base"
    summary = run_suite([suite], config, out, parallel=2)
    results = results_by_id(out)
    assert results["good"]["success"] and results["right-xlsx"]["success"]
    assert results["right-xlsx"]["gate_passed"] is True
    for task_id in ("bad-sheet-ref", "corrupt-xlsx"):
        assert results[task_id]["score"] == 0.0, results[task_id]
        assert results[task_id]["error"], results[task_id]
    assert "NoSuchSheet" in results["bad-sheet-ref"]["error"]
    assert (
        results["corrupt-xlsx"]["gate_passed"] is False
    )  # the structural check saw it does not parse
    assert summary["gate"]["rejected"] >= 1 and summary["gate"]["accepted_below_1"] == 1
    trajectory = (out / results["good"]["run_dir"] / "trajectory.html").read_text()
    assert "echo hello" in trajectory and "gate round 1: passed" in trajectory


@pytest.mark.docker
@pytest.mark.slow
def test_the_oracle_solves_the_bundled_suite_unattended(tmp_path):
    require_image("desktop")
    out = tmp_path / "out"
    done = stateact(
        "suite",
        str(BUNDLED),
        "--model",
        "script/oracle",
        "--parallel",
        "4",
        "--out",
        str(out),
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr
    assert "reference solutions" in done.stderr and "not a model" in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    results = results_by_id(out)
    assert summary["tasks"] == len(discover_tasks([BUNDLED])) == len(results)
    failed = {t: (r["status"], r["error"]) for t, r in results.items() if not r["success"]}
    assert not failed
    assert summary["success_rate"] == 1.0
    infeasible = [r for r in results.values() if r["status"] == "infeasible"]
    assert infeasible and all(r["score"] == 1.0 for r in infeasible)
    assert f"{summary['tasks']} tasks" in done.stdout and "report.html" in done.stdout


CHROMIUM_SCRIPT = """
import json
from playwright.sync_api import sync_playwright
messages = []
with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
    )
    page = browser.new_page()
    page.on("console", lambda m: messages.append(m.type + ": " + m.text))
    page.on("pageerror", lambda e: messages.append("pageerror: " + str(e)))
    page.goto("file:///tmp/report/report.html")
    rows = page.locator("table").first.locator("tbody tr").count()
    page.screenshot(path="/tmp/report/shot.png", full_page=True)
    page.click("a:has-text('good')")  # the task link (charts name tasks in tooltips too)
    title = page.title()
    browser.close()
print(json.dumps({"messages": messages, "rows": rows, "title": title}))
"""


@pytest.mark.docker
@pytest.mark.slow
def test_report_opens_in_headless_chromium_without_console_errors(tmp_path):
    require_image("desktop")
    from sandboxes import SandboxConfig, open_sandbox

    suite, out = tmp_path / "suite", tmp_path / "out"
    write_task(suite, file_task("good", "hello"), "echo hello > /home/user/out.txt\n")
    write_task(suite, {"id": "no-instruction", "evaluator": {"func": "exact_match"}})
    config = RunConfig(model="script/oracle")
    config.sandbox.image = "desktop"
    run_suite([suite], config, out)
    with open_sandbox(SandboxConfig(image="desktop")) as sandbox:
        sandbox.copy_in(out, "/tmp/report")
        code, output = sandbox.exec(["python3", "-c", CHROMIUM_SCRIPT], timeout=120)
        assert code == 0, output
        seen = json.loads(output.strip().splitlines()[-1])
        sandbox.copy_out("/tmp/report/shot.png", tmp_path / "shot.png")
    assert seen["messages"] == []
    assert seen["rows"] == 2
    assert seen["title"] == "Run good"  # the task link opened its trajectory.html
    image = Image.open(io.BytesIO((tmp_path / "shot.png").read_bytes()))
    assert image.format == "PNG" and image.width > 300 and image.height > 200
    colours = image.convert("L").getextrema()
    assert colours[0] < 100 < colours[1]  # dark text on a light page, not a blank image


@pytest.mark.docker
@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resume_finishes_the_rest(tmp_path):
    require_image("base")
    import signal
    import time

    suite, out = tmp_path / "suite", tmp_path / "out"
    for n in range(1, 4):
        write_task(
            suite, file_task(f"t-os-00{n}", "hello"), "sleep 2; echo hello > /home/user/out.txt\n"
        )
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "suite",
        str(suite),
        "--model",
        "script/oracle",
        "--image",
        "base",
        "--out",
        str(out),
    ]
    child = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    first = out / "runs" / "t-os-001" / "trajectory.jsonl"
    deadline = time.monotonic() + 120
    while (
        not (first.exists() and '"model_turn"' in first.read_text()) and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    output, _ = child.communicate(timeout=180)
    assert child.returncode == 130, output
    assert "--resume" in output and "Traceback" not in output
    assert not (
        out / "runs" / "t-os-001" / "result.json"
    ).exists()  # interrupted: left for --resume
    assert not (out / "runs" / "t-os-003").exists()  # queued: never started
    owners = [c.labels.get("stateact.owner", "") for c in listed_containers(running_only=True)]
    assert not any(owner.startswith(f"vm:{child.pid}:") for owner in owners)  # every sandbox closed
    done = stateact(
        "suite",
        str(suite),
        "--model",
        "script/oracle",
        "--image",
        "base",
        "--out",
        str(out),
        "--resume",
    )
    assert done.returncode == 0, done.stderr
    assert set(results_by_id(out)) == {"t-os-001", "t-os-002", "t-os-003"}
    assert json.loads((out / "summary.json").read_text())["success_rate"] == 1.0
