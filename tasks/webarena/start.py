"""The `webarena_start` setup step: before the agent, reset the sites if the task asks and the
user gave a reset hook, sign in to the task's sites (cached states), and open its start pages in
the desktop's browser."""

from __future__ import annotations

import logging
import os
import subprocess

from harness.kernel.core import StateActError
from tasks.webarena.browser import Run, browser_call, signed_in_state
from tasks.webarena.deployment import Deployment, active
from tasks.webarena.sites import LOGIN_SITES, SitesConfig
from tasks.webarena.task import CHROME_DEBUG_PORT

log = logging.getLogger(__name__)
RESET_TIMEOUT_S = 1800.0


def deployment_sites(deployment: Deployment) -> SitesConfig:
    if deployment.sites is None:
        raise StateActError("a WebArena task needs the sites file (--sites FILE)")
    return deployment.sites


def reset_sites(sites: SitesConfig, task_sites: list[str]) -> None:
    """The user's reset hook, run on this machine with the task's sites in `WEBARENA_SITES`."""
    env = {**os.environ, "WEBARENA_SITES": ",".join(task_sites)}
    try:
        done = subprocess.run(
            sites.reset_command,
            shell=True,
            env=env,
            capture_output=True,
            text=True,
            timeout=RESET_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise StateActError(
            f"the reset_command did not end within {RESET_TIMEOUT_S:.0f} s"
        ) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-300:]
        raise StateActError(f"the reset_command failed (exit {done.returncode}): {tail}")


def signed_in_states(run: Run, task_sites: list[str], deployment: Deployment) -> list[dict]:
    sites = deployment_sites(deployment)
    return [
        signed_in_state(run, sites, site, deployment.state_dir)
        for site in task_sites
        if site in LOGIN_SITES
    ]


def start_webarena(run: Run, params: dict, deployment: Deployment | None = None) -> dict:
    """Run the step with `params` (`sites`, `start_urls`, `require_login`, `require_reset`)."""
    deployment = deployment or active()
    sites = deployment_sites(deployment)
    task_sites = [str(site) for site in params.get("sites", [])]
    if params.get("require_reset"):
        if sites.reset_command:
            reset_sites(sites, task_sites)
        else:
            log.warning("the task asks for reset sites and the sites file has no reset_command")
    states = signed_in_states(run, task_sites, deployment) if params.get("require_login") else []
    urls = [sites.resolve(str(url)) for url in params.get("start_urls", [])]
    unresolved = [url for url in urls if sites.unresolved(url)]
    if unresolved:
        raise StateActError(f"the start page {unresolved[0]!r} names a site not configured")
    answer = browser_call(
        run, {"op": "start", "port": CHROME_DEBUG_PORT, "urls": urls, "states": states}
    )
    if answer["failures"]:
        raise StateActError(f"the start page did not open: {answer['failures'][0]}")
    return answer
