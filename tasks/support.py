"""Whether this harness can run a task, and why not: the `suite --dry-run` verdict.

Reasons read "<kind>: <detail>" so that a suite's reasons can be counted by kind.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import tasks.metrics  # noqa: F401  (registers every metric)
from harness.kernel.core import StateActError
from sandboxes.images.programs import declared_programs
from tasks.apps import missing_apps
from tasks.cache import HOST_PATHS_HINT, find_cached, is_url, local_reference
from tasks.getters import GETTERS, as_list
from tasks.metrics.registry import METRICS
from tasks.metrics.table import RULES as TABLE_RULES
from tasks.programs import missing_programs, root_reasons
from tasks.schema import SetupStep, Task, load_task
from tasks.setup import STEP_TYPES
from tasks.webarena.deployment import blockers as webarena_blockers
from tasks.webarena.task import webarena_of

ACCOUNT_STEPS = {"googledrive": "Google Drive", "login": "a website login"}
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", ""}
# Getters that open a web page themselves (not the sandbox's browser's tabs or files): at their
# `url` (a live one unless on the loopback), or at a site of their own when they name none.
LIVE_GETTERS = {
    "page_info",
    "gotoRecreationPage_and_get_html_content",
    "info_from_website",
    "pdf_from_url",
}
# Setup commands that install software from the internet: `pip install NAME` (a local wheel
# file is fine), `apt(-get) install`, `apt(-get) update`, `git clone`, `wget`.
INSTALLS = re.compile(
    r"\bpip3?\s+install\s+(?!\S*\.whl\b)(?P<pip>[\w.-]+)"
    r"|\bapt(?:-get)?\s+(?:-\S+\s+)*(?:install|update)\b"
    r"|\bgit\s+clone\b|\bwget\s"
)
FETCHES = re.compile(r"\b(?:curl|wget)\b[^|;&]*?(https?://[^\s\"'<>]+)")


def is_live_url(url: str) -> bool:
    """A URL that needs the internet (not a local file or a loopback server)."""
    parsed = urlparse(url if "://" in url else f"https://{url}")
    return parsed.scheme in ("http", "https") and parsed.hostname not in LOCAL_HOSTS


def command_text(command: Any) -> str:
    return command if isinstance(command, str) else " ".join(map(str, command or []))


def internet_reason(step: SetupStep) -> str | None:
    """Why a setup step needs the internet, or None."""
    params = step.parameters
    if step.type == "chrome_open_tabs":
        live = [u for u in params.get("urls_to_open", []) if is_live_url(str(u))]
        if live:
            return f"needs the internet: opens the live page {live[0]}"
    if step.type in ("command", "execute", "launch"):
        text = command_text(params.get("command"))
        install = INSTALLS.search(text)
        if install:
            return f"needs the internet: the setup runs `{install.group(0).strip()}`"
        live = [url for url in FETCHES.findall(text) if is_live_url(url)]
        if live:
            return f"needs the internet: the setup fetches {live[0]}"
    return None


def step_reasons(step: SetupStep, network: bool) -> list[str]:
    """Why a setup step cannot run here (files aside): every reason."""
    if step.type in ACCOUNT_STEPS:
        return [f"needs an account: the {step.type} step uses {ACCOUNT_STEPS[step.type]}"]
    reasons = [] if network else [internet_reason(step)]
    if step.type not in STEP_TYPES:
        reasons.append(f"setup step not implemented: {step.type}")
    return [reason for reason in reasons if reason]


def step_reason(step: SetupStep) -> str | None:
    """The first reason a setup step cannot run offline (files aside), or None."""
    return next(iter(step_reasons(step, network=False)), None)


def download_reasons(step: SetupStep, task: Task, cache_dir: Path | None) -> list[str]:
    if step.type != "download":
        return []
    sources = [str(item.get("url", "")) for item in step.parameters.get("files", [])]
    return [r for r in (source_reason(u, task, cache_dir) for u in sources) if r]


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
    for reference in file_references(task):
        if reference and not is_url(reference):
            local_reference(reference, task, cache_dir)


def file_references(task: Task) -> list[str]:
    """Every file a task names: its download steps' urls and its cloud/local file getters' paths."""
    references = [
        str(item.get("url", ""))
        for step in (*task.config, *task.evaluator.postconfig)
        if step.type == "download"
        for item in step.parameters.get("files", [])
        if isinstance(item, dict)
    ]
    for spec in (*task.evaluator.aligned("result"), *task.evaluator.aligned("expected")):
        for item in spec if isinstance(spec, list) else [spec]:
            if isinstance(item, dict) and item.get("type") in ("cloud_file", "local_file"):
                references += [str(path) for path in as_list(item.get("path"))]
    return [reference for reference in references if reference]


def getter_specs(spec: Any) -> list[dict]:
    """The getter specs of a result/expected entry (an entry may be a list of specs)."""
    return [item for item in (spec if isinstance(spec, list) else [spec]) if isinstance(item, dict)]


def getter_reasons(spec: Any, network: bool) -> list[str]:
    reasons = []
    for item in getter_specs(spec):
        kind = item.get("type")
        if kind not in GETTERS:
            reasons.append(f"getter not implemented: {kind}")
        url = item.get("path") if kind == "pdf_from_url" else item.get("url")
        live = not isinstance(url, str) or is_live_url(url)
        if kind in LIVE_GETTERS and live and not network:
            reasons.append(f"needs the internet: the {kind} getter reads a live web page")
    return reasons


def getter_reason(spec: Any) -> str | None:
    return next(iter(getter_reasons(spec, network=True)), None)


def getter_file_reasons(spec: Any, task: Task, cache_dir: Path | None) -> list[str]:
    return [
        reason
        for item in getter_specs(spec)
        if item.get("type") == "cloud_file"
        for path in as_list(item.get("path"))
        if (reason := source_reason(str(path), task, cache_dir))
    ]


def metric_reason(name: str, options: Any) -> str | None:
    if name not in METRICS:
        return f"metric not implemented: {name}"
    if name == "compare_table" and isinstance(options, dict):
        for rule in options.get("rules", []):
            if rule.get("type") not in TABLE_RULES:
                return f"compare_table rule not implemented: {rule.get('type')}"
    return None


def task_blockers(
    task: Task,
    cache_dir: Path | None,
    apps: set[str] | dict[str, str] | None = None,
    image: str = "desktop",
    network: bool = False,
    *,
    agent_sudo: bool = False,
) -> list[str]:
    """Every reason this harness cannot run `task`, without repeats; empty when it can.

    `apps` are the applications the chosen image declares (None: not checked; then its programs
    are not checked either). A task whose check reads state only root changes needs `agent_sudo`.
    Gaps of the harness (accounts, live web, root, applications, programs, steps, getters, metrics)
    come before missing input files, which only need a filled cache dir.
    """
    reasons: list[str] = []
    webarena = webarena_of(task)
    if webarena is not None:  # its own needs (sites, logins, resets); its steps are StateAct's
        reasons += webarena_blockers(webarena, network)
        if apps is not None:
            absent = missing_apps(task, apps)
            reasons += [f"application missing from the image {image}: {name}" for name in absent]
        return list(dict.fromkeys(reasons))
    if task.proxy and not network:
        reasons.append("needs the internet: the task runs through a proxy to live websites")
    steps = [*task.config, *task.evaluator.postconfig]
    for step in steps:
        reasons += step_reasons(step, network)
    if not agent_sudo:
        reasons += [f"needs root: {reason}; add --agent-sudo" for reason in root_reasons(task)]
    if apps is not None:
        absent = missing_apps(task, apps)
        reasons += [f"application missing from the image {image}: {name}" for name in absent]
        programs = declared_programs(image)
        if programs is not None:  # a launched application already named above is not repeated
            reasons += [
                f"program missing from the image {image}: {name}"
                for name in missing_programs(task, programs)
                if name not in absent
            ]
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
    for name, result, expected, options in aligned:
        reasons += [metric_reason(name, options)]
        reasons += getter_reasons(result, network) + getter_reasons(expected, network)
    for step in steps:
        reasons += download_reasons(step, task, cache_dir)
    for _, result, expected, _ in aligned:
        reasons += getter_file_reasons(result, task, cache_dir)
        reasons += getter_file_reasons(expected, task, cache_dir)
    return list(dict.fromkeys(reason for reason in reasons if reason))


def unsupported_reason(
    task: Task,
    cache_dir: Path | None,
    apps: set[str] | dict[str, str] | None = None,
    image: str = "desktop",
    network: bool = False,
    *,
    agent_sudo: bool = False,
) -> str | None:
    """The first reason this harness cannot run `task` (see task_blockers), or None when it can."""
    blockers = task_blockers(task, cache_dir, apps, image, network, agent_sudo=agent_sudo)
    return next(iter(blockers), None)


def reason_kind(reason: str) -> str:
    """The kind of a reason: its words before the first colon."""
    return reason.split(":", 1)[0]


def dry_run_record(
    path: str | Path,
    cache_dir: Path | None,
    allow_host_paths: bool = False,
    apps: set[str] | dict[str, str] | None = None,
    image: str = "desktop",
    network: bool = False,
    *,
    agent_sudo: bool = False,
) -> dict:
    """One line of `suite --dry-run`: id, path, domain, runnable, every reason. Never raises.

    `reason` is the first of `reasons` (kept for readers of the one-reason format).
    """
    path = Path(path)
    record: dict[str, Any] = {"id": path.stem, "path": str(path), "domain": path.parent.name}
    try:
        task = load_task(path)
        task.allow_host_paths = allow_host_paths
        record["id"] = task.id
        reasons = task_blockers(task, cache_dir, apps, image, network, agent_sudo=agent_sudo)
    except StateActError as exc:
        reasons = [f"broken task file: {exc}"]
    except Exception as exc:  # noqa: BLE001 -- a dry run reports, it never crashes
        reasons = [f"broken task file: {type(exc).__name__}: {exc}"]
    record["runnable"] = not reasons
    if reasons:
        record["reason"] = reasons[0]
        record["reasons"] = reasons
    return record
