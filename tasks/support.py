"""Whether this harness can run a task, and why not: the `suite --dry-run` verdict.

Reasons read "<kind>: <detail>" so that a suite's reasons can be counted by kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import tasks.metrics  # noqa: F401  (registers every metric)
from harness.kernel.core import StateActError
from tasks.cache import HOST_PATHS_HINT, find_cached, is_url, local_reference
from tasks.getters import GETTERS, as_list
from tasks.metrics.registry import METRICS
from tasks.metrics.table import RULES as TABLE_RULES
from tasks.schema import SetupStep, Task, load_task
from tasks.setup import STEP_TYPES

ACCOUNT_STEPS = {"googledrive": "Google Drive", "login": "a website login"}
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", ""}


def is_live_url(url: str) -> bool:
    """A URL that needs the internet (not a local file or a loopback server)."""
    parsed = urlparse(url if "://" in url else f"https://{url}")
    return parsed.scheme in ("http", "https") and parsed.hostname not in LOCAL_HOSTS


def step_reason(step: SetupStep) -> str | None:
    """Why a setup step cannot run here (files aside), or None."""
    params = step.parameters
    if step.type in ACCOUNT_STEPS:
        return f"needs an account: the {step.type} step uses {ACCOUNT_STEPS[step.type]}"
    if step.type == "chrome_open_tabs":
        live = [u for u in params.get("urls_to_open", []) if is_live_url(str(u))]
        if live:
            return f"needs the internet: opens the live page {live[0]}"
    if step.type not in STEP_TYPES:
        return f"setup step not implemented: {step.type}"
    return None


def download_reason(step: SetupStep, task: Task, cache_dir: Path | None) -> str | None:
    if step.type != "download":
        return None
    for item in step.parameters.get("files", []):
        reason = source_reason(str(item.get("url", "")), task, cache_dir)
        if reason:
            return reason
    return None


def source_reason(url_or_path: str, task: Task, cache_dir: Path | None) -> str | None:
    """Why a file a task names is unavailable, or None."""
    if is_url(url_or_path):
        if find_cached(url_or_path, task.id, cache_dir) is None:
            return f"file not in the cache dir: {url_or_path}"
        return None
    try:
        path = local_reference(url_or_path, task, cache_dir)
    except StateActError:
        return f"file outside the task folder: {url_or_path} ({HOST_PATHS_HINT})"
    if not path.is_file():
        return f"file missing: {url_or_path}"
    return None


def check_references(task: Task, cache_dir: Path | None) -> None:
    """Raise StateActError for the first file reference that leaves the task's folder and the cache.

    Commands call this before starting anything, so a refused reference is a bad input (exit 2).
    """
    references = [
        str(item.get("url", ""))
        for step in (*task.config, *task.evaluator.postconfig)
        if step.type == "download"
        for item in step.parameters.get("files", [])
        if isinstance(item, dict)
    ]
    for spec in (*task.evaluator.aligned("result"), *task.evaluator.aligned("expected")):
        if isinstance(spec, dict) and spec.get("type") in ("cloud_file", "local_file"):
            references += [str(path) for path in as_list(spec.get("path"))]
    for reference in references:
        if reference and not is_url(reference):
            local_reference(reference, task, cache_dir)


def getter_reason(spec: Any) -> str | None:
    if isinstance(spec, dict) and spec.get("type") not in GETTERS:
        return f"getter not implemented: {spec.get('type')}"
    return None


def getter_file_reason(spec: Any, task: Task, cache_dir: Path | None) -> str | None:
    if not isinstance(spec, dict) or spec.get("type") != "cloud_file":
        return None
    for path in as_list(spec.get("path")):
        reason = source_reason(str(path), task, cache_dir)
        if reason:
            return reason
    return None


def metric_reason(name: str, options: Any, expected: Any = None) -> str | None:
    if name not in METRICS:
        return f"metric not implemented: {name}"
    rules = expected.get("rules") if isinstance(expected, dict) else None
    if name == "check_accessibility_tree" and isinstance(rules, list):
        if any(isinstance(rule, dict) and "selectors" in rule for rule in rules):
            return "metric option not implemented: check_accessibility_tree with CSS selectors"
    if name == "compare_table" and isinstance(options, dict):
        for rule in options.get("rules", []):
            if rule.get("type") not in TABLE_RULES:
                return f"compare_table rule not implemented: {rule.get('type')}"
    return None


def unsupported_reason(task: Task, cache_dir: Path | None) -> str | None:
    """Why this harness cannot run `task`, or None when it can.

    Gaps of the harness (accounts, live web, unimplemented steps, getters, metrics) are reported
    before missing input files, which only need a filled cache dir.
    """
    if task.proxy:
        return "needs the internet: the task runs through a proxy to live websites"
    steps = [*task.config, *task.evaluator.postconfig]
    evaluator = task.evaluator
    aligned = list(
        zip(
            evaluator.funcs,
            evaluator.aligned("result"),
            evaluator.aligned("expected"),
            evaluator.aligned("options"),
            strict=True,
        )
    )
    reasons = (
        *(step_reason(step) for step in steps),
        *(
            metric_reason(name, options, expected)
            or getter_reason(result)
            or getter_reason(expected)
            for name, result, expected, options in aligned
        ),
        *(download_reason(step, task, cache_dir) for step in steps),
        *(
            getter_file_reason(result, task, cache_dir)
            or getter_file_reason(expected, task, cache_dir)
            for _, result, expected, _ in aligned
        ),
    )
    return next((reason for reason in reasons if reason), None)


def dry_run_record(
    path: str | Path, cache_dir: Path | None, allow_host_paths: bool = False
) -> dict:
    """One line of `suite --dry-run`: id, path, domain, runnable and (if not) the reason. Never raises."""
    path = Path(path)
    record: dict[str, Any] = {"id": path.stem, "path": str(path), "domain": path.parent.name}
    try:
        task = load_task(path)
        task.allow_host_paths = allow_host_paths
        record["id"] = task.id
        reason = unsupported_reason(task, cache_dir)
    except StateActError as exc:
        reason = f"broken task file: {exc}"
    except Exception as exc:  # noqa: BLE001 -- a dry run reports, it never crashes
        reason = f"broken task file: {type(exc).__name__}: {exc}"
    record["runnable"] = reason is None
    if reason is not None:
        record["reason"] = reason
    return record
