"""`desktop.wait_quiet`: the harness's wait, in the toolbox itself, until an application it started
has laid its window out (a task's setup: after a launch or an open step, so the agent's first look
and the next step find the window as it stays).

It watches the X server's damage reports (`drivers/x11damage.py`), so it needs no screenshot, no
Pillow and no driver process: a sandbox whose agent never looks at the screen keeps none running.
"""

from __future__ import annotations

from .drivers.desktop_env import NoDesktop, desktop_env
from .drivers.x11damage import DamageWatch, wait_quiet
from .errors import ToolError

_watches: dict[str, DamageWatch] = {}


def wait_until_quiet(quiet_s: float, cap_s: float) -> dict:
    try:
        display = desktop_env()["DISPLAY"]
    except NoDesktop as exc:
        raise ToolError(str(exc)) from None
    watch = _watches.get(display)
    if watch is None:
        try:
            watch = _watches[display] = DamageWatch(display)
        except OSError as exc:
            raise ToolError(f"the screen cannot be watched: {exc}.") from None
    return {"seconds": wait_quiet(watch, quiet_s, cap_s)}
