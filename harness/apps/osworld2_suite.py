"""Which OSWorld 2.0 tasks a suite runs and what stops them: the task modules of the user's data,
each described by the benchmark's own loader (one bridge process for the whole listing, no
machine), with the suite-wide blockers (checkout, data, services, judge) and each task's
applications missing from the image.

    records = osworld2_dry_run(config, paths, apps, image)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.kernel.core import StateActError
from tasks.apps import missing_apps
from tasks.osworld2.bridge import LOAD_TIMEOUT_S, Bridge, Osworld2Config
from tasks.osworld2.episode import osworld2_task
from tasks.osworld2.scoring import TASK_GLOB, blockers, task_files

BLOCKER_KIND = "OSWorld 2.0"
"""The kind the dry run's table groups the suite-wide blockers under."""


def osworld2_task_paths(config: Osworld2Config | None, paths: list[str]) -> list[Path]:
    """The task modules to run: those under `paths` (files or folders), else all of the data's."""
    if config is None:
        return []
    if not paths:
        return task_files(config)
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path.resolve())
        elif path.is_dir():
            found += sorted(p.resolve() for p in path.rglob(TASK_GLOB))
        else:
            raise StateActError(f"{path} is neither an OSWorld 2.0 task module nor a folder.")
    return list(dict.fromkeys(found))


def osworld2_dry_run(
    config: Osworld2Config | None,
    task_paths: list[Path],
    apps: dict[str, str] | None,
    image: str,
) -> tuple[list[dict], list[str]]:
    """(one record per task module, the suite-wide blockers). Never runs a machine; a task module
    the loader cannot read is a blocker of that task."""
    suite_blockers = [f"{BLOCKER_KIND}: {sentence}" for sentence in blockers(config)]
    if config is None or not task_paths:
        return [], suite_blockers
    descriptions = _describe(config, task_paths)
    records = []
    for path in task_paths:
        described = descriptions.get(path)
        reasons = list(suite_blockers)
        record: dict = {"id": path.stem, "path": str(path), "domain": path.parent.name}
        if isinstance(described, str):
            reasons.append(f"broken task file: {described}")
        elif described is not None:
            record.update(
                domain=described.get("domain") or record["domain"],
                phases=len(described.get("phases") or [1]),
                has_user=bool(described.get("has_user")),
            )
            if apps is not None:
                task = osworld2_task(path, "(listed)", list(described.get("related_apps") or []))
                reasons += [
                    f"application missing from the image {image}: {name}"
                    for name in missing_apps(task, apps)
                ]
        record["runnable"] = not reasons
        if reasons:
            record["reason"], record["reasons"] = reasons[0], reasons
        records.append(record)
    return records, suite_blockers


def _describe(config: Osworld2Config, task_paths: list[Path]) -> dict[Path, dict | str]:
    """Each task's description by the benchmark's loader, or the sentence why it failed; empty
    when the checkout cannot be started (the suite-wide blocker says why)."""
    if not (config.checkout / "desktop_env").is_dir():
        return {}
    found: dict[Path, dict | str] = {}
    with tempfile.TemporaryDirectory(prefix="stateact-osworld2-list-") as folder:
        with Bridge(config, Path(folder) / "bridge.log") as bridge:
            for path in task_paths:
                try:
                    found[path] = bridge.request("describe", LOAD_TIMEOUT_S, task_file=str(path))
                except StateActError as exc:
                    found[path] = str(exc)
                    if bridge.process is None or bridge.process.poll() is not None:
                        bridge.close()  # a task that killed the loader does not stop the list
                        bridge.start()
    return found
