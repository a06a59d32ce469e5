"""The sandbox's browser for WebArena tasks: signing in through each site's form (its storage
state cached per site and account), opening the start pages before the agent, and the page the
evaluators read after it (`ObserverPage`).

Everything runs in the sandbox (`sandbox_scripts/webarena_browser.py`), where the sites are
reachable through the Docker network the user names; the harness opens no port into it.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.kernel.core import StateActError
from tasks.chrome_live import script_call
from tasks.webarena.evaluators import PageUnavailable
from tasks.webarena.sites import SitesConfig

SCRIPT = (Path(__file__).parent / "sandbox_scripts" / "webarena_browser.py").read_text()
Run = Callable[[str], tuple[int, str]]
"""Runs one bash command line in the sandbox; returns (exit code, output)."""

LOGIN_FORMS: dict[str, dict[str, Any]] = {
    # The forms WebArena's auto_login fills: (where, how each field is found).
    "shopping": {
        "path": "/customer/account/login/",
        "username": ("label", "Email"),
        "password": ("label", "Password"),
        "submit": ("button", "Sign In"),
    },
    "reddit": {
        "path": "/login",
        "username": ("label", "Username"),
        "password": ("label", "Password"),
        "submit": ("button", "Log in"),
    },
    "shopping_admin": {
        "path": "",
        "username": ("placeholder", "user name"),
        "password": ("placeholder", "password"),
        "submit": ("button", "Sign in"),
    },
    "gitlab": {
        "path": "/users/sign_in",
        "username": ("test_id", "username-field"),
        "password": ("test_id", "password-field"),
        "submit": ("test_id", "sign-in-button"),
    },
}


class BrowserFailed(PageUnavailable):
    """The sandbox's browser could not carry out an operation (no verdict on the agent's work)."""


def browser_call(run: Run, request: dict) -> Any:
    """The JSON answer of one `webarena_browser.py` operation; BrowserFailed with its reason."""
    command = f"python3 -I -c {shlex.quote(SCRIPT)}"
    return script_call(run, command, request, "the browser's", BrowserFailed)


def state_file(state_dir: Path, sites: SitesConfig, site: str) -> Path:
    """Where `site`'s signed-in state is cached: one file per site URL and account."""
    account = sites.account(site)
    key = f"{site}\n{sites.sites[site]}\n{account.username if account else ''}"
    return state_dir / f"{site}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def signed_in_state(run: Run, sites: SitesConfig, site: str, state_dir: Path) -> dict:
    """`site`'s storage state: the cached one, else a fresh login through its form (then cached,
    readable only by this user: it holds a session)."""
    cached = state_file(state_dir, sites, site)
    if cached.is_file():
        try:
            return json.loads(cached.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            pass  # a broken cache file is replaced by a fresh login
    account, form = sites.account(site), LOGIN_FORMS.get(site)
    if account is None or form is None:
        raise StateActError(f"no account or login form for the WebArena site {site!r}")
    request = {
        "op": "login",
        "url": sites.sites[site].rstrip("/") + form["path"],
        "form": {key: form[key] for key in ("username", "password", "submit")},
        "username": account.username,
        "password": account.password,
    }
    state = browser_call(run, request)["state"]
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    cached.touch(mode=0o600)
    cached.write_text(json.dumps(state), encoding="utf-8")
    return state


class ObserverPage:
    """WebArena's `Page` for the evaluators, read in a fresh browser of the observer's.

    Each `evaluate`/`content` replays, in a new headless Chromium with the task's signed-in
    cookies, the navigation and the scripts since the last `goto`, then the call itself: the
    evaluators' page state lives in the sandbox, never in a browser the agent used. The page
    starts at `url`, the page the agent's browser ended on.
    """

    def __init__(self, run: Run, url: str, cookies: list[dict]):
        self.run, self.url, self.cookies = run, url, cookies
        self.end_url = url
        self.uid: int | None = None
        """The uid the last replay's browser ran as (the observer's on the docker backend)."""
        self.actions: list[tuple[str, str]] = [("goto", url)] if url else []

    def _play(self, action: tuple[str, str]) -> Any:
        request = {"op": "observe", "cookies": self.cookies, "actions": [*self.actions, action]}
        answer = browser_call(self.run, request)
        self.url, self.uid = answer["url"], answer.get("uid")
        return answer["values"][-1]

    def goto(self, url: str) -> None:
        self.actions = []
        loaded = self._play(("goto", url))
        if loaded is not None:  # the page did not load: nothing there to find
            raise StateActError(f"the page {url[:200]} did not load: {loaded['error']}")
        self.actions = [("goto", url)]

    def content(self) -> str:
        return str(self._play(("content", "")))

    def evaluate(self, script: str) -> Any:
        value = self._play(("evaluate", script))
        if "error" in value:
            raise StateActError(f"the page's script failed: {value['error']}")
        self.actions.append(("evaluate", script))
        return value["value"]
