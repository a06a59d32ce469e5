"""Which files of a suite folder are tasks, which suites they belong to, and their fixtures."""

from __future__ import annotations

import importlib.util
import json
import logging
from collections.abc import Callable
from pathlib import Path

from harness.kernel.core import StateActError
from tasks.schema import Task, load_task
from tasks.support import dry_run_record
from tasks.webarena.schema import is_webarena_task
from tasks.webarena.task import list_items

log = logging.getLogger(__name__)

TASK_KEYS = {"id", "instruction", "evaluator", "config"}
SUITE_TASKS_FOLDER = "tasks"
LIST_FILE_LIMIT = 64 * 1024 * 1024


def _looks_like_task_file(path: Path) -> bool:
    """Everything that may be a task, including broken ones; index files such as test_all.json
    are not."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return True  # a broken task file still gets a result saying why
    return (
        not isinstance(data, dict)
        or bool(TASK_KEYS & set(data))
        or not data
        or is_webarena_task(data)
    )


def webarena_list_items(path: Path) -> list[Path] | None:
    """A file holding a list of WebArena tasks (`test.raw.json`) as one path per task."""
    if path.stat().st_size > LIST_FILE_LIMIT:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return list_items(path, data)


def _search_root(folder: Path) -> Path:
    """A bundled suite keeps its tasks in `tasks/` beside fixture folders full of unrelated JSON."""
    tasks_folder = folder / SUITE_TASKS_FOLDER
    is_suite = (folder / "build.py").is_file() or (folder / "solutions").is_dir()
    return tasks_folder if is_suite and tasks_folder.is_dir() else folder


def discover_tasks(paths: list[str | Path]) -> list[Path]:
    """Task files named by `paths` (files, or folders searched recursively), in order, without
    repeats."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found += webarena_list_items(path) or [path]
        elif path.is_dir():
            root = _search_root(path)
            for p in sorted(root.rglob("*.json")):
                if p.is_file() and _looks_like_task_file(p):
                    found += webarena_list_items(p) or [p]
        else:
            raise StateActError(f"{path} is neither a task file nor a folder.")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def suite_roots(task_paths: list[Path]) -> list[Path]:
    """Suite folders (with a fixture generator `build.py`) the tasks belong to."""
    roots = []
    for path in task_paths:
        root = path.parent.parent
        if (
            path.parent.name == SUITE_TASKS_FOLDER
            and (root / "build.py").is_file()
            and root not in roots
        ):
            roots.append(root)
    return roots


BUNDLED_SUITES = Path(__file__).resolve().parents[2] / "tasks" / "suites"
"""StateAct's own suites (`tasks/suites/` of the installed distribution)."""


def is_bundled(suite_root: Path) -> bool:
    """A suite shipped inside StateAct itself, whose build script is part of the installed code."""
    return suite_root.resolve().is_relative_to(BUNDLED_SUITES)


def foreign_build_scripts(task_paths: list[Path]) -> list[Path]:
    """Build scripts of the tasks' suites that did not ship with StateAct."""
    return [root / "build.py" for root in suite_roots(task_paths) if not is_bundled(root)]


def ensure_suite_fixtures(task_paths: list[Path], foreign: bool = True) -> None:
    """Call `ensure_fixtures()` of every suite the tasks come from, so their input files exist.

    `foreign=False` runs only the build scripts that ship with StateAct: a suite from elsewhere is
    code, and a dry run must not execute it on this machine unless the user asks.
    """
    for root in suite_roots(task_paths):
        if not foreign and not is_bundled(root):
            continue
        spec = importlib.util.spec_from_file_location(
            f"stateact_suite_build_{abs(hash(root))}", root / "build.py"
        )
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            module.ensure_fixtures(root)
        except Exception as exc:  # noqa: BLE001 -- the tasks then report their missing files one by one
            log.warning("building the fixtures of %s failed: %s", root, exc)


def task_domain(task: Task | None, path: Path) -> str:
    """The folder a task sits in; for a bundled suite's `tasks/` folder, the id's middle
    (`lh-calc-001` → calc)."""
    extra = (task.model_extra or {}).get("stateact") if task is not None else None
    if isinstance(extra, dict) and isinstance(extra.get("domain"), str):
        return extra["domain"]
    if path.parent.name != SUITE_TASKS_FOLDER:
        return path.parent.name
    parts = (task.id if task is not None else path.stem).split("-")
    middle = [p for p in parts[1:] if not p.isdigit()]
    return "-".join(middle) or parts[0]


def dry_run(
    paths: list[str | Path],
    cache_dir: Path | None,
    emit: Callable[[dict], None],
    build_fixtures: bool = False,
    allow_host_paths: bool = False,
    apps: dict[str, str] | None = None,
    image: str = "desktop",
    network: bool = False,
    agent_sudo: bool = False,
) -> list[dict]:
    """`emit` one record per task (runnable, or every reason why not) without running anything.

    `apps` are the applications of the chosen image (None: not checked); with `network` the tasks'
    live pages and installs are not blockers, with `agent_sudo` the need for root. Only StateAct's
    own suites build their fixtures first; another suite's build script runs only with
    `build_fixtures` (its tasks otherwise report their missing files). Returns the records.
    """
    task_paths = discover_tasks(paths)
    ensure_suite_fixtures(task_paths, foreign=build_fixtures)
    records = []
    for path in task_paths:
        record = dry_run_record(
            path, cache_dir, allow_host_paths, apps, image, network, agent_sudo=agent_sudo
        )
        if path.parent.name == SUITE_TASKS_FOLDER:
            try:
                record["domain"] = task_domain(load_task(path), path)
            except StateActError:
                pass
        emit(record)
        records.append(record)
    return records
