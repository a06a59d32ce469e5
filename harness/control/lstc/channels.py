"""The `lstc` mode's execution boundary (LocalLSTC §3.2.2, Appendix D.3-D.4): the bash and
software-API (python) channels, the grounded GUI channel, the runtime's WAIT, and what each action
left: the files it changed and, for a GUI action, the screens before and after it."""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.kernel.core import StateActError, ToolError
from harness.tools import PythonTool
from sandboxes.toolbox.protocol import BashRun, FsChanged
from sandboxes.typed import run

from ..stall import fingerprint
from .gui import GUI_TOOLS, Grounder, GuiChannel, grounder_options

SESSION = "lstc"


@dataclass
class Outcome:
    """What one executed action returned and left."""

    ok: bool
    output: str
    diff: list[str]
    before: bytes | None = None
    after: bytes | None = None


class Channels:
    """Runs one action on its channel and reports what changed."""

    def __init__(self, context):
        config = context.config
        self.settings = settings = config.lstc
        self.sandbox = context.sandbox
        self.started_at = context.started_at
        self.python = PythonTool(context.sandbox, timeout_s=settings.action_timeout_s)
        self.gui = None
        if settings.grounder:
            options = grounder_options(
                settings.grounder, config.model_options, settings.grounder_base_url
            )
            grounder = Grounder(
                settings.grounder, options, context.stats, settings.grounder_coordinates
            )
            size = tuple(config.sandbox.display_size)
            self.gui = GuiChannel(context.sandbox, size, grounder, context.stats)
        self.changed: dict[str, tuple] = {}

    @property
    def gui_tools(self) -> tuple[str, ...]:
        return GUI_TOOLS if self.gui else ()

    def screen(self) -> bytes | None:
        """The current screen (None without a GUI channel or when it cannot be read)."""
        if self.gui is None:
            return None
        try:
            return self.gui.screenshot()
        except (ToolError, StateActError):
            return None

    def act(self, tool: str, command: str) -> Outcome:
        # The screens just before and after the action (a GUI action takes its own before)
        before = self.screen() if tool == "wait" else None
        ok, output = self.execute(tool, command)
        after = None
        if self.gui is not None and tool in GUI_TOOLS:
            before = self.gui.before_png
            after = self.gui.last_png if before is not None else None
        elif before is not None:
            after = self.screen()
        return Outcome(ok, output, self.file_diff(), before, after)

    def execute(self, tool: str, command: str) -> tuple[bool, str]:
        if tool == "wait":
            seconds = float(command or 2)
            time.sleep(seconds)
            return True, f"waited {seconds:g} s"
        if tool in GUI_TOOLS:
            try:
                return True, self.gui.act(tool, command)
            except (ToolError, StateActError) as exc:
                return False, f"{tool} failed: {exc}"
        try:
            if tool == "bash":
                request = BashRun(command, self.settings.action_timeout_s, session=SESSION)
                result = run(self.sandbox, request)
                output = result.output.rstrip("\n")
                if result.timed_out:
                    return False, f"{output}\n[timed out]"
                return result.exit_code == 0, f"{output}\n[exit code {result.exit_code}]"
            result = self.python(code=command)
            return result.error is None, result.error if result.error is not None else result.output
        except ToolError as exc:
            return False, str(exc)

    def file_diff(self) -> list[str]:
        """Files changed since the previous action (the state diff the abstraction sees)."""
        try:
            listed = run(self.sandbox, FsChanged(self.started_at, limit=500)).paths
        except (ToolError, StateActError):
            return []
        now = {p["path"]: (p["mtime"], p["size"]) for p in listed}
        diff = [
            f"{path} ({size} bytes)"
            for path, (mtime, size) in now.items()
            if self.changed.get(path) != (mtime, size)
        ]
        self.changed = now
        return diff

    def state_key(self) -> str:
        """The files changed so far (as of the last action) and the last screen."""
        screen = self.gui.last_png if self.gui else None
        files = sorted((path, *stat) for path, stat in self.changed.items())
        return fingerprint([files, fingerprint(screen.hex()) if screen else None])
