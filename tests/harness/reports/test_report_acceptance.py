"""Issue 15's acceptance: the bundled suite run twice (the oracle with the `full` preset, a scripted
model that gives up with `no-verify`) gives a comparison page listing the tasks whose scores differ,
report pages with the charts, trajectories with screenshots, and OSWorld's layout and tabulation."""

from __future__ import annotations

import json

import pytest

from harness.kernel.records import safe_run_name
from tests.conftest import REPO, require_image, stateact
from tests.osworld_tabulation import tabulate
from tests.report_helpers import browser, keep_screenshot

__all__ = ["browser"]
TASKS = REPO / "tasks" / "suites" / "longhorizon" / "tasks"
# Two tasks the oracle solves and one it (rightly) declares infeasible.
CHOSEN = ("lh-os-001", "lh-os-002", "lh-inf-001")
PNG_SCRIPT = (
    "import struct, zlib\n"
    "w, h = 160, 100\n"
    "raw = b''.join(b'\\x00' + bytes([30, 90, 160]) * w for _ in range(h))\n"
    "def chunk(kind, data):\n"
    "    body = kind + data\n"
    "    return struct.pack('>I', len(data)) + body + struct.pack('>I', zlib.crc32(body))\n"
    "header = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)\n"
    "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', header) + chunk(b'IDAT', "
    "zlib.compress(raw))\n"
    "open('/tmp/look.png', 'wb').write(png + chunk(b'IEND', b''))\n"
)


def give_up_script() -> list[dict]:
    """Look around, draw and view a picture (a screenshot in the trajectory), declare infeasible."""

    def call(name, **arguments):
        return {"tool_calls": [{"name": name, "input": arguments}]}

    return [
        call("bash", command="ls /home/user"),
        call("bash", command=f"python3 - <<'EOF'\n{PNG_SCRIPT}EOF"),
        call("view_image", path="/tmp/look.png"),
        call("finish", summary="This cannot be done here.", infeasible=True),
    ]


def run_suite(out, model: str, preset: str) -> dict:
    tasks = [str(TASKS / f"{task_id}.json") for task_id in CHOSEN]
    done = stateact("suite", *tasks, "--model", model, "--preset", preset, "--out", str(out))
    assert done.returncode == 0, done.stderr
    # Not a terminal: one plain progress line per task, with the running cost and the ETA.
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == len(CHOSEN) and all("ETA" in line and "$" in line for line in lines)
    return json.loads((out / "summary.json").read_text())


@pytest.mark.docker
@pytest.mark.slow
def test_two_runs_of_the_bundled_suite_compare_and_report(tmp_path, browser):
    require_image("desktop")
    script = tmp_path / "give-up.json"
    script.write_text(json.dumps(give_up_script()))
    summary_a = run_suite(tmp_path / "a", "script/oracle", "full")
    summary_b = run_suite(tmp_path / "b", f"script/{script}", "no-verify")
    scores_a = {t["task_id"]: t["score"] for t in summary_a["per_task"]}
    scores_b = {t["task_id"]: t["score"] for t in summary_b["per_task"]}
    assert scores_a == dict.fromkeys(CHOSEN, 1.0)
    differ = {t for t in CHOSEN if scores_a[t] != scores_b[t]}
    assert differ == {"lh-os-001", "lh-os-002"}  # the infeasible task scores 1 both times

    out = tmp_path / "compare.html"
    done = stateact("report", str(tmp_path / "a"), str(tmp_path / "b"), "--html", str(out))
    assert done.returncode == 0, done.stderr
    # diffs (-1, -1, 0): all-regression and all-same resamples are both above 2.5 %
    assert "regression" in done.stdout and "[-1.000, +0.000]" in done.stdout
    page, errors = browser.open(out, tmp_path / "acceptance-compare.png")
    keep_screenshot(tmp_path / "acceptance-compare.png")
    assert errors == []
    assert "Scores that differ (2)" in page.inner_text("body")
    listed = page.locator("table").nth(1).locator("tbody tr td:first-child").all_inner_texts()
    assert set(listed) == differ
    page.locator("table.sortable a").first.click()  # a status links to that run's trajectory
    assert page.title().startswith("Run lh-os-00")

    for side in ("a", "b"):
        report, errors = browser.open(tmp_path / side / "report.html", tmp_path / f"{side}.png")
        keep_screenshot(tmp_path / f"{side}.png")
        assert errors == [] and report.locator(".chart svg").count() == 5
    trajectory = tmp_path / "b" / "runs" / "lh-inf-001" / "trajectory.html"
    view, errors = browser.open(trajectory, tmp_path / "acceptance-trajectory.png")
    keep_screenshot(tmp_path / "acceptance-trajectory.png")
    assert errors == []
    assert view.evaluate("document.querySelector('img.thumb').naturalWidth") == 160
    assert view.locator("svg[aria-label='timeline of turns'] rect").count() == 4

    # OSWorld's tabulation reads both runs with StateAct's own figures.
    for side, summary, preset, model in (
        ("a", summary_a, "full", "script_oracle"),
        ("b", summary_b, "no-verify", safe_run_name(f"script/{script}")),
    ):
        table = tabulate("stateact", model, preset, str(tmp_path / side / "results"))
        assert table is not None, sorted(p.name for p in (tmp_path / side / "results").rglob("*"))
        assert len(table["all"]) == 3
        assert sum(table["all"]) / 3 == pytest.approx(summary["mean_score"], abs=1e-6)
