"""The sandbox's virtual desktop seen from the host: start it once, act with xdotool, take
screenshots.

The work happens in the toolbox's desktop driver (`sandboxes/toolbox/drivers/desktop.py`), which
ships with the toolbox; each method here is one `desktop.*` toolbox call with a small argument dict,
and a screenshot comes back once, as the one base64 field of the answer.
"""

from __future__ import annotations

import base64

from sandboxes.base import OSWORLD_SCREEN

DEFAULT_TIMEOUT_S = 60.0
SETTLE_CAP_S = 2.0
"""Longest wait for the screen to stop changing after an action (the reference demo always waits
2 s)."""


class Desktop:
    """One sandbox's X desktop (Xvfb :1 + openbox), started on first use at `size`."""

    def __init__(self, sandbox, size: tuple[int, int] = OSWORLD_SCREEN):
        self.sandbox = sandbox
        self.requested_size = (int(size[0]), int(size[1]))
        self.size: tuple[int, int] | None = None
        self.start_seconds: float | None = None
        self.screen_watch: str | None = None
        """How the driver sees the screen change: "damage" (X DAMAGE events) or "polling"."""

    def _call(self, function: str, timeout: float = DEFAULT_TIMEOUT_S, **args) -> dict:
        return self.sandbox.call(f"desktop.{function}", timeout=float(timeout), **args)

    def ensure_started(self) -> tuple[int, int]:
        """The screen size in pixels, starting the desktop if it is not running yet."""
        if self.size is None:
            width, height = self.requested_size
            started = self._call("start", timeout=90, width=width, height=height)
            self.size = (started["width"], started["height"])
            self.start_seconds = started["seconds"]
            self.screen_watch = started.get("screen_watch")
        return self.size

    def screenshot(self, out_size: tuple[int, int], settle_s: float = 0.0) -> bytes:
        """The screen as a PNG scaled to `out_size`; with `settle_s`, after it stopped changing."""
        self.ensure_started()
        shot = self._call("screenshot", width=out_size[0], height=out_size[1], settle_s=settle_s)
        return base64.b64decode(shot["png_b64"])

    def act(
        self, commands: list[list[str]], out_size: tuple[int, int], settle_s: float = SETTLE_CAP_S
    ) -> bytes:
        """Run xdotool commands (each an argument list; `["sleep", s]` pauses) and return the
        settled screen."""
        self.ensure_started()
        timeout = 60 + sum(float(c[1]) for c in commands if c[0] == "sleep")
        shot = self._call(
            "act",
            timeout=timeout,
            commands=commands,
            width=out_size[0],
            height=out_size[1],
            settle_s=settle_s,
        )
        return base64.b64decode(shot["png_b64"])

    def zoom(
        self, region: tuple[int, int, int, int], fit: tuple[int, int]
    ) -> tuple[bytes, int, int]:
        """A screen region (pixels) enlarged to fit `fit`; returns the PNG and its size."""
        self.ensure_started()
        shot = self._call("zoom", region=list(region), width=fit[0], height=fit[1])
        return base64.b64decode(shot["png_b64"]), shot["width"], shot["height"]

    def cursor(self) -> tuple[int, int]:
        self.ensure_started()
        position = self._call("cursor")
        return position["x"], position["y"]

    def launch(self, argv: list[str], window: str, timeout: float = 60.0) -> float:
        """Start a program on the desktop and wait until its window shows and the screen settles;
        returns the seconds it took."""
        self.ensure_started()
        started = self._call(
            "launch", timeout=timeout + 30, argv=argv, window=window, timeout_s=timeout
        )
        return started["seconds"]

    def windows(self) -> str:
        """`wmctrl -l`: one line per window (id, desktop, host, title)."""
        self.ensure_started()
        return self._call("windows")["windows"]

    def active_window(self) -> str:
        """The title of the window that has the keyboard focus ('' if none)."""
        self.ensure_started()
        return self._call("windows")["active"]
