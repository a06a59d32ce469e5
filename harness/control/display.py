"""The display belongs to the GUI specialist (the `stateact` mode).

By default the main agent's and its workers' bash and Python sessions are started in the toolbox's
screenless flavour (`sandboxes/toolbox/screenless.py`): they reach no X display, session bus or
accessibility bus, whatever they try. `--main-display` gives the screen back; then every main-agent
bash or Python call that drives or reads the screen (xdotool, pyautogui, Xlib, wmctrl, a
screenshot program, an explicit DISPLAY) is counted as a GUI step and recorded as `screen_use`, so
the GUI-use figures stay honest.
"""

from __future__ import annotations

import re

from harness.kernel.core import StateActError, ToolError
from harness.kernel.loop import LoopHook, ToolLoop
from sandboxes.toolbox.protocol import SessionScreen
from sandboxes.typed import run

SCREEN_WORDS = re.compile(
    r"\b(xdotool|pyautogui|pynput|Xlib|xlib|wmctrl|xwd|scrot|xclip|xsel|ydotool|xte|xinput|"
    r"gnome-screenshot|import\s+-window|DISPLAY\s*=|stateact-desktop\.env)",
)
CODE_TOOLS = {"bash": "command", "python": "code"}


def keep_off_screen(sandbox) -> str | None:
    """Start the agent's sessions screenless from now on. Returns None, or why this machine cannot
    (a kernel without Landlock's socket scoping): the run then goes on with the screen reachable
    and its use counted, and the record says so, rather than refusing every run on such a host."""
    try:
        run(sandbox, SessionScreen(allowed=False))
    except (StateActError, ToolError) as exc:
        return str(exc)
    return None


class ScreenUseCounter(LoopHook):
    """Under `--main-display`: counts the main agent's code calls that touch the screen."""

    def after_tool_results(self, loop: ToolLoop) -> None:
        turn = loop.messages[-2] if len(loop.messages) >= 2 else None
        if not turn or turn["role"] != "assistant":
            return
        for block in turn["content"]:
            field = (
                CODE_TOOLS.get(block.get("name", "")) if block.get("type") == "tool_use" else None
            )
            text = (block.get("input") or {}).get(field) if field else None
            if isinstance(text, str) and SCREEN_WORDS.search(text):
                loop.stats.gui_steps += 1
                if loop.record is not None:
                    loop.record.append(
                        "screen_use",
                        agent=loop.agent,
                        tool=block["name"],
                        tool_use_id=block.get("id"),
                    )
