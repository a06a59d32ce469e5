"""The WebArena deployment a process runs against: the user's sites file (`--sites FILE`, or the
run config's `sites` key), how many tasks run at once, and where signed-in states are cached.

The command line sets it once (`configure`) before it lists or runs tasks; `run_task` sets it
again from its config, so a task run through the Python API or on a Ray node sees the same
sites. A task's blockers and its setup and scoring read it from here, which keeps the loader,
the dry run and the runner free of WebArena parameters.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tasks.webarena.evaluators import Judge
from tasks.webarena.schema import WebArenaTask
from tasks.webarena.sites import LOGIN_SITES, SitesConfig, load_sites, task_blockers

STATE_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stateact"
"""Default home of the signed-in states (`<cache>/webarena-auth/`) when no --cache is given."""


@dataclass
class Deployment:
    """Where the sites are (`sites` None: no sites file), and how many tasks share them."""

    sites: SitesConfig | None = None
    parallel: int = 1
    source: str | None = None
    """The sites file it was read from."""
    state_dir: Path = field(default_factory=lambda: STATE_CACHE / "webarena-auth")
    """Where each site's signed-in storage state is cached (one JSON file per site and account)."""
    judge: Judge | None = None
    """The model judging `fuzzy_match` answers (`--judge-model`); None: those tasks are blocked."""
    judge_named: bool = False
    """A dry run was given `--judge-model` (it lists, it builds no model client)."""


_active = Deployment()


def configure(
    sites_file: str | os.PathLike | None, parallel: int | None = None, cache: str | None = None
) -> Deployment:
    """Read `sites_file` (one sentence on what is wrong with it) and make it the active
    deployment; `parallel` and `cache` keep their previous values when None."""
    global _active
    sites = load_sites(sites_file) if sites_file is not None else None
    state_dir = Path(cache) / "webarena-auth" if cache else _active.state_dir
    _active = Deployment(
        sites=sites,
        parallel=_active.parallel if parallel is None else max(1, int(parallel)),
        source=None if sites_file is None else str(sites_file),
        state_dir=state_dir,
        judge=_active.judge,
    )
    return _active


def use_judge(judge: Judge | None) -> None:
    """Make `judge` the active deployment's judge of `fuzzy_match` answers."""
    _active.judge = judge


def active() -> Deployment:
    return _active


def blockers(task: WebArenaTask, network: bool, deployment: Deployment | None = None) -> list[str]:
    """What stops `task` here: a site not configured, an account missing for its login, a reset
    it needs in a parallel run without the reset hook, no network to reach the sites."""
    deployment = deployment or _active
    found = task_blockers(task, deployment.sites, deployment.parallel)
    if task.require_login and deployment.sites is not None:
        for site in task.sites:
            if site in LOGIN_SITES and deployment.sites.account(site) is None:
                found.append(f"no account to sign in to the WebArena site {site!r} (accounts:)")
    fuzzy = (task.eval.reference_answers or {}).get("fuzzy_match")
    if isinstance(fuzzy, list) and deployment.judge is None and not deployment.judge_named:
        found.append("its answer is judged by a model (fuzzy_match): give one with --judge-model")
    if not network:
        found.append(
            "needs the network: WebArena's sites are reached through --network (--network-mode "
            "NAME for the Docker network they run on)"
        )
    return found
