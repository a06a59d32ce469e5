"""A WebArena task scored after the agent stopped: WebArena's evaluators (`evaluators.py`) on the
agent's `finish` answer, the page its browser ended on, and the pages `program_html` names.

Who reads what (docs/webarena.md, docs/security.md):
- the end page's URL comes from the desktop's browser, the agent's own state, through the same
  DevTools reader as OSWorld's Chrome getters (`tasks/chrome_live.py`: the port must be held by
  Chromium's root-owned binary, so an endpoint the agent served would not be believed);
- every page `program_html` reads is loaded in a fresh headless Chromium run as the observer
  user (docker backend), with the harness's cached sign-in cookies and no profile, extension or
  page of the agent's, after every process of the agent has been ended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.kernel.core import StateActError
from tasks.chrome_live import cdp_call
from tasks.webarena.browser import BrowserFailed, ObserverPage, Run, state_file
from tasks.webarena.deployment import Deployment, active
from tasks.webarena.evaluators import JudgeFailed, evaluate_task
from tasks.webarena.rest import SandboxShopHelpers
from tasks.webarena.schema import WebArenaTask
from tasks.webarena.sites import LOGIN_SITES

NOT_AVAILABLE = "N/A"
"""What an agent that declares the task infeasible answers, as WebArena's agents stop with."""


@dataclass
class WebArenaVerdict:
    values: dict[str, float] = field(default_factory=dict)
    """Each evaluator's value, and `score` their product."""
    error: str | None = None
    """A verdict of 0 with its reason (a bad task, the agent's wrong page)."""
    failure: str | None = None
    """The evaluation could not run (the sandbox, the browser): no verdict on the work."""
    inputs: dict = field(default_factory=dict)
    """What was compared: the answer, the end page, the uid the judging browser ran as."""


def runner_of(sandbox, user: str) -> Run:
    def run(command: str) -> tuple[int, str]:
        kwargs = {"user": user} if user else {}
        return sandbox.exec(["bash", "-c", command], timeout=300.0, **kwargs)

    return run


def cached_cookies(task: WebArenaTask, deployment: Deployment) -> list[dict]:
    """The harness's signed-in cookies for the task's sites (never the agent's browser's)."""
    cookies: list[dict] = []
    if not task.require_login or deployment.sites is None:
        return cookies
    for site in task.sites:
        if site in LOGIN_SITES and site in deployment.sites.sites:
            path = state_file(deployment.state_dir, deployment.sites, site)
            if path.is_file():
                cookies += json.loads(path.read_text(encoding="utf-8")).get("cookies", [])
    return cookies


def end_url(sandbox) -> str:
    """The URL of the tab on screen in the agent's browser ("" when no tab is)."""
    tab = cdp_call(runner_of(sandbox, ""), {"op": "active", "wait_s": 5})
    return str(tab["url"]) if tab else ""


def observer_user(sandbox) -> str:
    """The observer's uid on the docker backend; the local backend has no second user."""
    return "observer" if getattr(sandbox, "backend", "") == "docker" else ""


def score_webarena(
    task: WebArenaTask, sandbox, answer: str | None, infeasible: bool
) -> WebArenaVerdict:
    """WebArena's verdict on the stopped sandbox; never raises."""
    deployment = active()
    if deployment.sites is None:
        return WebArenaVerdict(failure="a WebArena task needs the sites file (--sites FILE)")
    pred = NOT_AVAILABLE if infeasible else (answer or "")
    needs_page = any(kind != "string_match" for kind in task.eval.eval_types)
    try:
        page = helpers = None
        if needs_page:
            if sandbox is None:
                raise StateActError("url_match and program_html need the live sandbox")
            run = runner_of(sandbox, observer_user(sandbox))
            page = ObserverPage(run, end_url(sandbox), cached_cookies(task, deployment))
            helpers = SandboxShopHelpers(run, deployment.sites)
    except StateActError as exc:
        return WebArenaVerdict(failure=str(exc))
    try:
        values = evaluate_task(
            task,
            pred,
            page,
            resolve=deployment.sites.resolve,
            judge=deployment.judge,
            helpers=helpers,
        )
    except (BrowserFailed, JudgeFailed) as exc:  # the browser or the judge, not the work
        return WebArenaVerdict(failure=str(exc))
    except StateActError as exc:
        return WebArenaVerdict(values={"score": 0.0}, error=str(exc))
    inputs = {"answer": pred[:300]}
    if page is not None:
        inputs.update(end_url=page.end_url[:300], observer_uid=page.uid)
    return WebArenaVerdict(values=values, inputs=inputs)
