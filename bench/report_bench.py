"""Report pages over 400 generated results, beside the plainest way to show the same rows: one
escaped HTML table with no charts, sorting, failure groups or interval."""

from __future__ import annotations

import html
import random
import tempfile
from pathlib import Path

from harness.reports.compare import compare
from harness.reports.compare_view import write_compare_html
from harness.reports.html_report import write_report
from harness.reports.summary import summarize

from . import Row, median_time, row

TASKS = 400
RUNS = 5
DOMAINS = ("calc", "writer", "impress", "os", "db", "x", "gui", "web")


def generated(seed: int) -> list[dict]:
    rng = random.Random(seed)
    results = []
    for n in range(TASKS):
        score = rng.choice([0.0, 0.5, 1.0, 1.0])
        results.append(
            {
                "task_id": f"gen-{n:03d}",
                "domain": DOMAINS[n % len(DOMAINS)],
                "score": score,
                "success": score == 1.0,
                "status": "completed" if score == 1.0 else "gate_rejected",
                "error": None if score == 1.0 else f"rejected after {rng.randint(1, 9)} rounds",
                "cost_usd": rng.uniform(0, 1),
                "duration_s": rng.uniform(5, 900),
                "model_turns": rng.randint(1, 60),
                "main_turns": rng.randint(1, 30),
                "gate_rounds": rng.randint(0, 3),
                "gate_passed": score == 1.0,
                "run_dir": f"runs/gen-{n:03d}",
            }
        )
    return results


def plain_table(results: list[dict], path: Path) -> None:
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r.get(k)))}</td>" for k in r) + "</tr>"
        for r in results
    )
    path.write_text(f"<!DOCTYPE html><table>{cells}</table>", encoding="utf-8")


def rows() -> list[Row]:
    a, b = generated(1), generated(2)
    summary = summarize(a)
    with tempfile.TemporaryDirectory(prefix="stateact-report-bench-") as folder:
        out = Path(folder)
        ours = median_time(lambda: write_report(out, a, summary), RUNS)
        plain = median_time(lambda: plain_table(a, out / "plain.html"), RUNS)
        size = (out / "report.html").stat().st_size
        page = out / "compare.html"
        compared = median_time(lambda: write_compare_html(compare(a, b), page), RUNS)
        plain_pairs = median_time(lambda: plain_table(a + b, out / "plain2.html"), RUNS)
        compare_size = page.stat().st_size
    return [
        row(
            f"report.html, {TASKS} tasks",
            ours,
            RUNS,
            "one escaped table",
            plain,
            f"{size / 1024:.0f} KiB with 5 charts, sortable table, failure groups",
        ),
        row(
            f"comparison page, {TASKS} paired tasks",
            compared,
            RUNS,
            "one escaped table of both runs",
            plain_pairs,
            f"{compare_size / 1024:.0f} KiB; 2000 bootstrap resamples",
        ),
    ]
