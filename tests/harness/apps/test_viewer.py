"""`stateact view OUT` in headless Chromium: no console errors, the report follows a running 4-task
suite by itself, and a failed task's trajectory page says which metric failed and why."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from harness.apps.viewer import serve
from harness.kernel.core import StateActError
from harness.reports.svg import scatter
from tests.conftest import REPO, require_image
from tests.harness.apps.test_suite_runner import file_task, write_task
from tests.report_helpers import browser, fake_results, write_fake_run, write_fake_suite

__all__ = ["browser"]


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_the_viewer_binds_to_loopback_only_and_serves_nothing_outside_out(tmp_path):
    out = tmp_path / "out"
    write_fake_suite(out, fake_results(3))
    (tmp_path / "secret.txt").write_text("not for the browser")
    (out / "runs" / "leak").symlink_to(tmp_path)
    with pytest.raises(StateActError, match="loopback address only"):
        serve(out, host="0.0.0.0", port=0)
    server = serve(out, port=0)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        status, body = fetch(base + "/")
        assert status == 200 and b"StateAct suite report" in body
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/runs/leak/secret.txt"):
            assert fetch(base + path)[0] == 404, path
        version = json.loads(fetch(base + "/_version?page=/")[1])["version"]
        assert version == json.loads(fetch(base + "/_version?page=/")[1])["version"]
    finally:
        server.shutdown()


def test_a_single_run_directory_is_shown_as_its_trajectory(tmp_path, browser):
    run_dir = tmp_path / "run"
    result = {
        **fake_results(1)[0],
        "success": False,
        "score": 0.0,
        "status": "completed",
        "error": None,
        "metrics": [
            {
                "name": "compare_table",
                "value": 0.0,
                "error": None,
                "inputs": {
                    "result": "file out.xlsx (4,120 bytes)",
                    "expected": "file gold.xlsx (4,200 bytes)",
                },
            }
        ],
    }
    write_fake_run(run_dir, result)
    server = serve(run_dir, port=0)
    try:
        page, errors = browser.open_url(f"http://127.0.0.1:{server.server_address[1]}/")
        text = page.inner_text("body")
        assert "Why it did not succeed" in text
        assert "checker: compare_table failed (0.0): the result was file out.xlsx" in text
        assert errors == []
    finally:
        server.shutdown()


def test_tasks_on_the_same_spot_are_one_dot_with_their_count():
    points = [(f"t{n}", 0.0, 1.0, True) for n in range(5)] + [("other", 0.5, 0.0, False)]
    drawn = scatter(points, "cost ($)", "score", "cost vs score")
    assert drawn.count("<circle") == 2 and "×5" in drawn and "5 tasks: t0, t1, t2, t3, t4" in drawn
    for tick in (">0.1<", ">0.2<", ">0.3<", ">0.4<", ">0.5<", ">0.6<", ">0.8<"):
        assert tick in drawn  # both axes carry ticks between their ends


@pytest.mark.docker
@pytest.mark.slow
def test_the_view_follows_a_running_suite_and_explains_a_failed_metric(tmp_path, browser):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    for n in range(1, 4):
        write_task(
            suite, file_task(f"t-os-00{n}", "hello"), "sleep 3; echo hello > /home/user/out.txt\n"
        )
    write_task(
        suite, file_task("t-os-004", "hello"), "sleep 3; echo goodbye > /home/user/out.txt\n"
    )
    argv = ["suite", str(suite), "--model", "script/oracle", "--image", "base", "--out", str(out)]
    child = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "runs").is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        server = serve(out, port=0)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        page, errors = browser.open_url(base + "/")
        rows_seen = [page.locator("table.sortable tbody tr").count()]
        while child.poll() is None and time.monotonic() < deadline + 300:
            time.sleep(1)
            try:  # the page reloads itself; count its rows as it shows them
                rows_seen.append(page.locator("table.sortable tbody tr").count())
            except Exception:  # noqa: BLE001 -- a count taken while the page reloads
                continue
        assert child.returncode == 0, child.stderr.read()
        page.wait_for_function(
            "() => document.querySelectorAll('table.sortable tbody tr').length === 4", timeout=15000
        )
        rows_seen.append(4)
        assert rows_seen[0] < 4 and len(set(rows_seen)) >= 3, rows_seen  # it updated as tasks ended
        assert errors == [], errors

        page.locator("table.sortable a", has_text="t-os-004").click()
        page.wait_for_selector("text=Why it did not succeed")
        text = page.inner_text("body")
        assert "check_include_exclude failed (0.0): the result was 'goodbye\\n'" in text
        assert "expected {'include': ['hello'], 'exclude': []}" in text
        shot = tmp_path / "trajectory-failed-metric.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        assert errors == [], errors
        server.shutdown()
    finally:
        if child.poll() is None:
            child.kill()
