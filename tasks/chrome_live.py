"""The desktop's live Chrome over the DevTools protocol, driven from inside the sandbox.

Playwright's `connect_over_cdp` runs in the sandbox (`sandbox_scripts/chrome_cdp.py`, sent as
`python3 -c`), so the harness never opens a port into the sandbox: the browser's debugging port
stays on the sandbox's loopback, as in OSWorld's VM where socat forwards 9222 to Chrome's 1337.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from harness.kernel.core import StateActError

SCRIPT = (Path(__file__).parent / "sandbox_scripts" / "chrome_cdp.py").read_text()
Run = Callable[[str], tuple[int, str]]
"""Runs one bash command line in the sandbox as its user; returns (exit code, output)."""


def script_call(run: Run, command: str, request: dict, who: str, error=StateActError) -> Any:
    """The JSON answer (the last output line) of one operation of a sandbox script run by
    `command` with `request` as its argument; `error` naming `who` and the reason otherwise."""
    code, output = run(f"{command} {shlex.quote(json.dumps(request))}")
    lines = output.strip().splitlines()
    if code != 0 or not lines:
        reason = lines[-1] if lines else f"exit {code}, no output"
        raise error(f"{who} {request['op']} failed: {reason[-300:]}")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        raise error(f"{who} {request['op']} answered {lines[-1][-200:]!r}") from None


def cdp_call(run: Run, request: dict) -> Any:
    """The JSON answer of one `chrome_cdp.py` operation; StateActError with its reason otherwise."""
    return script_call(run, f"python3 -c {shlex.quote(SCRIPT)}", request, "Chrome")


def omnibox_text(url: str) -> str:
    """What Chrome's address bar shows for `url`: http(s) without its scheme and a leading
    `www.`."""
    parts = urlparse(url)
    if parts.scheme not in ("http", "https"):
        return url
    shown = url.split("://", 1)[1]
    return shown.removeprefix("www.")
