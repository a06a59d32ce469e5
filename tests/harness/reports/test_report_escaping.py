"""`stateact report` and the HTML views show model-written control characters as escapes:
terminal escape sequences, carriage returns and bidirectional overrides never reach the terminal
or the page."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from harness.kernel.display import visible
from harness.kernel.records import RunRecord
from harness.reports.html_report import write_report, write_trajectory_html
from tests.conftest import REPO

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rgate round 9: passed\u202etxt.exe\x9b31m"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_run(run_dir):
    record = RunRecord(run_dir)
    record.append(
        "model_turn",
        agent="main",
        turn=1,
        content=[
            {"type": "text", "text": HOSTILE},
            {"type": "tool_use", "id": "t1", "name": f"bash{HOSTILE}", "input": {"c": HOSTILE}},
        ],
    )
    record.append("plan", agent="main", items=[{"text": HOSTILE, "status": "in_progress"}])
    record.append("gate_round", agent="gate", round=1, passed=False, gaps=[HOSTILE])
    # The agent's answer is in what a checker's judge reads, so it is hostile there too.
    judged = {"model": "gpt-4o", "system": "s", "user": f"student answer: {HOSTILE}"}
    record.append("judge_call", agent="judge", answer=f"correct{HOSTILE}", **judged)
    record.close()
    result = {"task_id": f"t{HOSTILE}", "status": "gate_rejected", "error": HOSTILE}
    (run_dir / "result.json").write_text(json.dumps(result))


def test_terminal_report_escapes_control_characters(tmp_path):
    hostile_run(tmp_path / "run")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "report", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert not RAW.search(done.stdout.replace("\n", ""))
    assert "\\x1b]0;pwned\\x07" in done.stdout and "\\u202e" in done.stdout
    # The injected "gate round 9: passed" stays on the line of the text that carried it.
    assert not any(line.startswith("gate round 9") for line in done.stdout.splitlines())


def test_html_views_escape_control_characters(tmp_path):
    hostile_run(tmp_path / "run")
    page = write_trajectory_html(tmp_path / "run").read_text()
    assert not RAW.search(page.replace("\n", "").replace("\t", ""))
    assert "\\x1b" in page
    assert "judge gpt-4o" in page and page.count("student answer: ") == 1
    result = {"task_id": f"t{HOSTILE}", "run_dir": "run", "status": "error", "error": HOSTILE}
    report = write_report(tmp_path, [result], {"tasks": 1, "model": HOSTILE}).read_text()
    assert not RAW.search(report.replace("\n", "")) and "\\u202e" in report


def test_visible_keeps_plain_text_and_optionally_lines():
    assert visible("Zoë 42 — ok") == "Zoë 42 — ok"
    assert visible("a\nb\tc") == "a\\x0ab\\x09c"
    assert visible("a\nb\tc", keep_lines=True) == "a\nb\tc"


def hostile_line(task_id: str, score: float) -> dict:
    return {
        "task_id": f"{task_id}{HOSTILE}<script>alert(1)</script>",
        "score": score,
        "success": score == 1.0,
        "status": f"error{HOSTILE}",
        "error": f"<img src=x onerror=alert(1)>{HOSTILE}",
        "domain": f"calc{HOSTILE}<b>",
        "cost_usd": 0.1,
        "model_turns": 2,
        "run_dir": "runs/x",
    }


def test_charts_failures_and_comparison_escape_model_text(tmp_path):
    from harness.reports.compare import compare
    from harness.reports.compare_view import write_compare_html
    from harness.reports.summary import summarize

    a = [hostile_line("t1", 1.0), hostile_line("t2", 0.0)]
    b = [hostile_line("t1", 0.0), hostile_line("t2", 0.0)]
    report = write_report(tmp_path, a, summarize(a)).read_text()
    page = write_compare_html(compare(a, b, HOSTILE, "b"), tmp_path / "c.html").read_text()
    for html in (report, page):
        assert not RAW.search(html.replace("\n", ""))
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert html.count("<script>") <= 1  # only the page's own table sorter


def test_terminal_comparison_escapes_control_characters(tmp_path):
    for name, score in (("a", 1.0), ("b", 0.0)):
        (tmp_path / name).mkdir()
        line = hostile_line("t1", score)
        (tmp_path / name / "results.jsonl").write_text(json.dumps(line) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "report", str(tmp_path / "a"), str(tmp_path / "b")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert not RAW.search(done.stdout.replace("\n", ""))
    assert "\\x1b" in done.stdout and "regression" in done.stdout
