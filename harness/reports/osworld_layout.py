"""A suite's results in OSWorld's folder layout, so scripts that tabulate OSWorld runs read them:

    OUT/results/<action space>/<observation>/<model>/<domain>/<task id>/result.txt   the score
    OUT/results/<action space>/<observation>/<model>/<domain>/<task id>/traj.jsonl   one line a step
    OUT/results/<action space>/<observation>/<model>/<domain>/<task id>/step_N_<time>.png

StateAct's action space is its control mode (`stateact`), the observation is the preset (`full`),
the model is the model spec with `/` as `_` (`script_oracle`): each one path component.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from harness.kernel.records import load_events, safe_run_name

from .page import score_of

RESULTS_FOLDER = "results"
SCREENSHOT_FILE = re.compile(r"^images/\d+\.png$")


def result_folder(out_dir: Path, result: dict) -> Path:
    """Where one task's result.txt goes."""
    return (
        Path(out_dir)
        / RESULTS_FOLDER
        / safe_run_name(result.get("control") or "stateact")
        / safe_run_name(result.get("preset") or "full")
        / safe_run_name(result.get("model") or "model")
        / safe_run_name(result.get("domain") or "unknown")
        / safe_run_name(str(result.get("task_id")))
    )


def _stamp(seconds) -> str:
    moment = time.gmtime(seconds if isinstance(seconds, int | float) else 0)
    return time.strftime("%Y%m%d@%H%M%S", moment)


def _screenshot(blocks) -> str | None:
    """The first screenshot file among tool results' content blocks."""
    for block in blocks or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "image" and isinstance(block.get("file"), str):
            return block["file"]
        found = _screenshot(block.get("content") if isinstance(block.get("content"), list) else [])
        if found:
            return found
    return None


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def trajectory_steps(run_dir: Path, folder: Path) -> list[dict]:
    """The main agent's tool calls as OSWorld steps; each step's screenshot is linked beside it."""
    events = load_events(run_dir)
    steps: list[dict] = []
    for i, event in enumerate(events):
        if event.get("event") != "model_turn" or event.get("agent") != "main":
            continue
        following = events[i + 1] if i + 1 < len(events) else {}
        shot = (
            _screenshot(following.get("content"))
            if following.get("event") == "tool_results"
            else None
        )
        for block in event.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            step = {
                "step_num": len(steps) + 1,
                "action_timestamp": _stamp(event.get("time")),
                "action": {"tool": block.get("name"), "input": block.get("input")},
                "reward": 0,
                "done": False,
                "info": {},
                "screenshot_file": None,
            }
            source = run_dir / shot if shot and SCREENSHOT_FILE.match(shot) else None
            if source is not None and source.is_file() and not source.is_symlink():
                name = f"step_{step['step_num']}_{step['action_timestamp']}.png"
                _link_or_copy(source, folder / name)
                step["screenshot_file"] = name
                shot = None  # one screenshot belongs to the turn's first step
            steps.append(step)
    if steps:
        steps[-1]["done"] = True
    return steps


def write_osworld_results(out_dir: Path, results: list[dict]) -> Path:
    """result.txt (the score) and traj.jsonl for every finished task; returns the results folder."""
    out_dir = Path(out_dir)
    for result in results:
        folder = result_folder(out_dir, result)
        folder.mkdir(parents=True, exist_ok=True)
        run_dir = (out_dir / str(result.get("run_dir") or "")).resolve()
        inside = result.get("run_dir") and run_dir.is_relative_to(out_dir.resolve())
        steps = trajectory_steps(run_dir, folder) if inside else []
        with open(folder / "traj.jsonl", "w", encoding="utf-8") as handle:
            for step in steps:
                handle.write(json.dumps(step, default=str) + "\n")
        # Written last: OSWorld's runners treat a folder with result.txt as finished.
        (folder / "result.txt").write_text(f"{score_of(result)}\n", encoding="utf-8")
    return out_dir / RESULTS_FOLDER
