"""A WebArena task file as a StateAct task: `load_task` (tasks/schema.py) hands every WebArena
object here, so a WebArena file runs, lists and scores through the same loader, suite and runner
as an OSWorld one.

The StateAct task keeps WebArena's own fields under `webarena` (read back by `webarena_of`). Its
setup launches the desktop's browser with DevTools on the sandbox's loopback, as OSWorld's Chrome
tasks do (so the web specialist and the checker share one browser), then the `webarena_start`
step resets and signs in to the sites and opens the start page; its evaluator is `webarena`
(scored by `tasks/webarena/scoring.py` with the agent's `finish` answer).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tasks.webarena.schema import WebArenaTask, is_webarena_task, parse_webarena_task

PROMPT = (Path(__file__).with_name("prompts") / "instruction.md").read_text(encoding="utf-8")
CHROME_DEBUG_PORT = 1337
EVALUATOR = "webarena"
START_STEP = "webarena_start"
LIST_ITEM = "#"
"""`test.raw.json#12` names item 12 of a file holding a list of tasks."""


def launch_steps() -> list[dict]:
    """The desktop browser with DevTools on loopback (1337, forwarded on 9222 as OSWorld does)."""
    return [
        {
            "type": "launch",
            "parameters": {
                "command": ["google-chrome", f"--remote-debugging-port={CHROME_DEBUG_PORT}"]
            },
        },
        {
            "type": "launch",
            "parameters": {
                "command": ["socat", "tcp-listen:9222,fork", f"tcp:localhost:{CHROME_DEBUG_PORT}"]
            },
        },
    ]


def task_dict(task: WebArenaTask) -> dict[str, Any]:
    """The StateAct (OSWorld-shaped) task for `task`, before `load_task` validates it."""
    start = {
        "type": START_STEP,
        "parameters": {
            "sites": task.sites,
            "start_urls": task.start_urls,
            "require_login": task.require_login,
            "require_reset": task.require_reset,
        },
    }
    return {
        "id": task.id,
        "instruction": PROMPT.format(intent=task.intent.strip()),
        "config": [*launch_steps(), start],
        "evaluator": {"func": EVALUATOR},
        "related_apps": ["chrome"],
        "source": "webarena",
        "webarena": task.model_dump(mode="json"),
    }


def webarena_task_dict(data: dict, where: str) -> dict[str, Any]:
    """`data` (a WebArena object) as a StateAct task dict; StateActError when it is malformed."""
    return task_dict(parse_webarena_task(data, where))


def webarena_of(task) -> WebArenaTask | None:
    """The WebArena task a StateAct task was made from, or None for any other task."""
    data = (getattr(task, "model_extra", None) or {}).get("webarena")
    if getattr(task, "source", None) != "webarena" or not isinstance(data, dict):
        return None
    return WebArenaTask.model_validate(data)


def list_item(path: Path) -> tuple[Path, int] | None:
    """(file, index) for a `FILE#N` path naming one task of a list file; None otherwise."""
    name = path.name
    if LIST_ITEM not in name:
        return None
    stem, _, index = name.rpartition(LIST_ITEM)
    if not index.isdigit():
        return None
    return path.with_name(stem), int(index)


def list_items(path: Path, data: Any) -> list[Path] | None:
    """`FILE#0`, `FILE#1`, … for a file holding a list of WebArena tasks; None for any other."""
    if not isinstance(data, list) or not data or not all(is_webarena_task(d) for d in data):
        return None
    return [path.with_name(f"{path.name}{LIST_ITEM}{n}") for n in range(len(data))]


@lru_cache(maxsize=4)
def _parsed(path: str, mtime_ns: int, size: int) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_json(path: Path) -> Any:
    """A list file's content, parsed once for all its items (812 in `test.raw.json`). The caller
    takes its item and validates a copy, so the shared parse is never changed."""
    stat = path.stat()
    return _parsed(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
