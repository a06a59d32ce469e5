"""report.html, trajectory.html and the comparison page, opened in headless Chromium: they render
without console errors, the charts and the sorting work, and 400 tasks stay readable and small."""

from __future__ import annotations

import json

from harness.reports.compare import compare
from harness.reports.compare_view import write_compare_html
from harness.reports.html_report import write_report, write_trajectory_html
from tests.report_helpers import (
    browser,
    fake_results,
    keep_screenshot,
    write_fake_run,
    write_fake_suite,
)

__all__ = ["browser"]
MAX_PAGE_BYTES = 2 * 1024 * 1024


def test_report_with_400_tasks_renders_charts_and_sorts(tmp_path, browser):
    results = fake_results(400)
    summary = write_fake_suite(tmp_path, results)
    path = write_report(tmp_path, results, summary)
    assert path.stat().st_size < MAX_PAGE_BYTES
    page, errors = browser.open(path, tmp_path / "report-400.png")
    keep_screenshot(tmp_path / "report-400.png")
    assert errors == []
    assert page.locator(".chart svg").count() == 5
    assert page.locator("table.sortable tbody tr").count() == 400
    # Charts keep their size however many tasks there are: readable, not squeezed.
    for box in page.locator(".chart svg").all():
        size = box.bounding_box()
        assert 200 <= size["width"] <= 1000 and 30 <= size["height"] <= 700
    # Cost against score: every task is counted, tasks on the same spot as one dot with its count.
    counts = page.evaluate(
        """() => [...document.querySelectorAll('circle')].map(c => {
            const m = c.querySelector('title').textContent.match(/^(\\d+) tasks:/);
            return m ? Number(m[1]) : 1; })"""
    )
    assert sum(counts) == 400
    shared = [n for n in counts if n > 1]
    assert page.locator("svg text.count").count() == len(shared)
    # Sorting by score (4th column) puts the lowest first, then the highest after a second click.
    header = page.locator("table.sortable th").nth(3)
    header.click()
    first = page.locator("table.sortable tbody tr").first.locator("td").nth(3).inner_text()
    header.click()
    top = page.locator("table.sortable tbody tr").first.locator("td").nth(3).inner_text()
    assert float(first) == 0.0 and float(top) == 1.0
    assert errors == []
    failures = page.locator("details summary").all_inner_texts()
    failed = sum(1 for r in results if not r["success"])
    assert sum(int(text.split("×")[0]) for text in failures) == failed


def test_trajectory_shows_thumbnails_gate_layers_and_timeline(tmp_path, browser):
    run = tmp_path / "runs" / "t1"
    write_fake_run(run, fake_results(1)[0])
    path = write_trajectory_html(run)
    page, errors = browser.open(path, tmp_path / "trajectory.png")
    keep_screenshot(tmp_path / "trajectory.png")
    assert errors == []
    thumb = page.locator("a > img.thumb")
    assert thumb.count() == 1
    link = thumb.locator("xpath=..").get_attribute("href")
    assert (run / link).is_file()
    # The thumbnail is small on the page and its link opens the full-size picture.
    assert thumb.bounding_box()["width"] <= 242  # 240 and the border
    assert page.evaluate("document.querySelector('img.thumb').naturalWidth") == 640
    layers = page.locator(".layer").all_inner_texts()
    assert layers.count("structural") == 2 and layers.count("probe") == 2  # round file + event
    assert "wrong total" in page.content()  # the probe's evidence
    assert page.locator("svg[aria-label='timeline of turns'] rect").count() == 2
    assert "2 model turns" in page.inner_text("body")


def test_comparison_page_lists_changed_tasks_first(tmp_path, browser):
    a = fake_results(400, seed=1)
    b = [dict(r) for r in a]
    for line in b[:7]:
        line.update(score=1.0 - line["score"], success=line["score"] != 1.0)
    comparison = compare(a, b, "run-a", "run-b")
    path = write_compare_html(comparison, tmp_path / "out" / "compare.html")
    assert path.stat().st_size < MAX_PAGE_BYTES
    page, errors = browser.open(path, tmp_path / "compare-400.png")
    keep_screenshot(tmp_path / "compare-400.png")
    assert errors == []
    changed = {r["task_id"] for r in b[:7] if r["score"] != a[b.index(r)]["score"]}
    heading = page.locator("h2", has_text="Scores that differ")
    assert f"({len(changed)})" in heading.inner_text()
    listed = page.locator("table").nth(1).locator("tbody tr td:first-child").all_inner_texts()
    assert set(listed) == changed
    rows = page.locator("table.sortable tbody tr td:nth-child(2)").all_inner_texts()
    assert rows[: len(changed)] and all(r != "same" for r in rows[: len(changed)])
    assert "paired bootstrap interval" in page.inner_text("body")
    assert json.dumps(comparison.to_json())  # the --json form serializes


def test_screenshots_outside_the_run_folder_are_not_linked(tmp_path):
    from harness.reports.trajectory import _image_html

    for name in ("../../etc/passwd", "/etc/passwd", "images/../../x.png", "javascript:alert(1)"):
        assert "<img" not in _image_html(name) and "href" not in _image_html(name)
    assert 'src="images/00001.png"' in _image_html("images/00001.png")
