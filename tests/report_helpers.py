"""Generated suite results for the report tests, and a headless Chromium to open the pages in."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import shutil
from pathlib import Path

import pytest
from PIL import Image

from harness.kernel.records import RunRecord
from harness.reports.summary import summarize

CHROMIUM = Path(os.environ.get("STATEACT_CHROMIUM", "/usr/bin/chromium"))
DOMAINS = ("calc", "writer", "impress", "os", "db", "x", "gui", "web")
STATUSES = ("completed", "gate_rejected", "max_turns", "error", "model_error")


def png_b64(color: tuple[int, int, int], size=(640, 400)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def fake_result(n: int, rng: random.Random, **overrides) -> dict:
    """One results.jsonl line as the suite writes it, with plausible random figures."""
    score = rng.choice([0.0, 0.0, 0.5, 1.0, 1.0, 1.0])
    status = "completed" if score == 1.0 else rng.choice(STATUSES)
    rounds = rng.choice([0, 1, 1, 2, 3])
    line = {
        "task_id": f"gen-{DOMAINS[n % len(DOMAINS)]}-{n:03d}",
        "score": score,
        "success": score == 1.0,
        "status": status,
        "error": None if status == "completed" else f"{status} after {rng.randint(1, 40)} turns",
        "cost_usd": round(rng.uniform(0.001, 0.9), 4),
        "input_tokens": rng.randint(1000, 90000),
        "output_tokens": rng.randint(100, 9000),
        "model_turns": rng.randint(1, 60),
        "main_turns": rng.randint(1, 30),
        "tool_uses": rng.randint(1, 60),
        "delegations": 0,
        "gui_steps": 0,
        "gate_rounds": rounds,
        "gate_passed": (score == 1.0 or rng.random() < 0.2) if rounds else None,
        "duration_s": round(rng.uniform(5, 900), 1),
        "domain": DOMAINS[n % len(DOMAINS)],
        "preset": "full",
        "control": "stateact",
        "model": "script/generated",
        "run_dir": f"runs/gen-{DOMAINS[n % len(DOMAINS)]}-{n:03d}",
        "main_steps": 4,
        "gui_delegations": 0,
    }
    line.update(overrides)
    return line


def fake_results(count: int, seed: int = 1, **overrides) -> list[dict]:
    rng = random.Random(seed)
    return [fake_result(n, rng, **overrides) for n in range(count)]


def write_fake_suite(out: Path, results: list[dict], screenshots: bool = False) -> dict:
    """A suite directory: results.jsonl, summary.json and a run folder with a trajectory per
    task."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.jsonl", "w", encoding="utf-8") as handle:
        for line in results:
            handle.write(json.dumps(line) + "\n")
    for line in results:
        write_fake_run(out / line["run_dir"], line, screenshots=screenshots)
    summary = summarize(results)
    (out / "summary.json").write_text(json.dumps(summary))
    return summary


def write_fake_run(run_dir: Path, result: dict, screenshots: bool = True) -> None:
    """A run folder with a task, two turns (the second with a screenshot), a gate round, a
    result."""
    record = RunRecord(run_dir)
    record.append("task", agent="main", content=[{"type": "text", "text": "Do the thing."}])
    usage = {"cost_usd": 0.0123, "prompt_tokens": 900, "output_tokens": 80}
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}
    record.append("model_turn", agent="main", turn=1, content=[call], usage=usage)
    content = [{"type": "text", "text": "report.xlsx"}]
    if screenshots:
        image = {"type": "base64", "media_type": "image/png", "data": png_b64((40, 90, 160))}
        content.append({"type": "image", "source": image})
    record.append(
        "tool_results",
        agent="main",
        content=[{"type": "tool_result", "tool_use_id": "t1", "content": content}],
    )
    finish = {"type": "tool_use", "id": "t2", "name": "finish", "input": {"summary": "done"}}
    record.append("model_turn", agent="main", turn=2, content=[finish], usage=usage)
    gate = {
        "round": 1,
        "passed": False,
        "decided": True,
        "decided_by": "structural",
        "gaps": ["/home/user/report.xlsx was not saved", "the total in B9 is wrong"],
        "gap_layers": ["structural", "probe"],
        "source": "structural",
        "structural": [
            {"check": "exists", "path": "/home/user/report.xlsx", "ok": False, "detail": "missing"}
        ],
        "probes": [{"command": "python3 -c 'print(1)'", "exit_code": 1, "output": "wrong total"}],
        "transcript": [],
    }
    record.write_gate_round(1, gate)
    record.append(
        "gate_round",
        agent="harness",
        round=1,
        passed=False,
        gaps=gate["gaps"],
        layers=gate["gap_layers"],
    )
    record.close()
    (run_dir / "result.json").write_text(json.dumps(result))


class Browser:
    """Chromium driven by Playwright: opens a page, collects console errors, takes screenshots."""

    def __init__(self, browser):
        self.browser = browser

    def open(self, path: Path, screenshot: Path | None = None, width: int = 1400):
        return self.open_url(Path(path).resolve().as_uri(), screenshot, width)

    def open_url(self, url: str, screenshot: Path | None = None, width: int = 1400):
        page = self.browser.new_page(viewport={"width": width, "height": 1000})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
        page.goto(url)
        page.wait_for_load_state("load")
        if screenshot is not None:
            page.screenshot(path=str(screenshot), full_page=False)
        return page, errors


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"CI must install Chromium ({CHROMIUM}): .ci/install-host-tools.sh")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--headless"]
        )
        try:
            yield Browser(chromium)
        finally:
            chromium.close()


def keep_screenshot(path: Path) -> None:
    """Copy a screenshot where a person can look at it after the run (STATEACT_SCREENSHOTS)."""
    target = os.environ.get("STATEACT_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
