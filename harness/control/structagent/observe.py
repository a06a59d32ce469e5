"""What StructAgent's initializer and visual verifier see: a screenshot and the accessibility tree.

Only a run that uses the screen (a `gui` specialist or the main agent's `computer`) has one; on a
headless run the observation says so and carries no image. A screen that cannot be read is news
for the model, not a crash.
"""

from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field

from harness.kernel.core import StateActError, ToolError
from sandboxes.toolbox.observer import SAFE_DESKTOP_ENV
from subagents import Desktop
from tasks.getters.registry import ATSPI_DUMP

log = logging.getLogger(__name__)

A11Y_CHARS = 6000
"""How much of the accessibility tree one request shows (the paper prefilters it too)."""


@dataclass
class Observation:
    text: str = ""
    images: list[bytes] = field(default_factory=list)


def uses_screen(config) -> bool:
    return config.main.computer or "gui" in config.subagents.enabled


def observe(context, *, a11y: bool = True) -> Observation:
    """The current screenshot (scaled to the display size) and, with `a11y`, the accessibility
    tree's first `A11Y_CHARS` characters; an empty observation on a headless run."""
    config = context.config
    if not uses_screen(config):
        return Observation("<screen>this run has no screen; judge from files and outputs</screen>")
    size = tuple(config.sandbox.display_size)
    try:
        png = Desktop(context.sandbox, size).screenshot(size)
    except (StateActError, ToolError, OSError) as exc:
        return Observation(f"<screen>the screen could not be read: {exc}</screen>")
    text = ""
    if a11y:
        code, tree = context.sandbox.exec(
            ["bash", "-c", f"{SAFE_DESKTOP_ENV}python3 -c {shlex.quote(ATSPI_DUMP)}"], timeout=60
        )
        shown = tree[:A11Y_CHARS] if code == 0 else f"(unavailable: {tree[-200:]})"
        text = f"<accessibility-tree>\n{shown}\n</accessibility-tree>"
    return Observation(text, [png])
