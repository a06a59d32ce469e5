"""Shell helpers for tests that drive applications in a desktop-image sandbox."""

from __future__ import annotations

import time

ENV = "[ -f /tmp/stateact-desktop.env ] && . /tmp/stateact-desktop.env; "
"""Puts a command on the sandbox's display and session bus."""


def sh(box, script: str, timeout: float = 120, user: str = "user") -> str:
    """Run `script` on the desktop; its output, or an assertion naming the failure."""
    code, out = box.exec(["bash", "-c", ENV + script], timeout=timeout, user=user)
    assert code == 0, f"{script!r} failed ({code}): {out[-800:]}"
    return out


def wait_for(box, script: str, what: str, timeout: float = 90) -> str:
    """Re-run `script` until it succeeds with some output."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, out = box.exec(["bash", "-c", ENV + script], timeout=30)
        if code == 0 and out.strip():
            return out
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def window_of(box, pattern: str, flag: str = "--name") -> str:
    """The id of the first visible window whose name (or `flag`) matches `pattern`."""
    script = f"xdotool search --onlyvisible {flag} {pattern!r} | head -1"
    return wait_for(box, script, f"a window {pattern}").strip()
