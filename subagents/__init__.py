"""Fresh-context specialists the main agent delegates to: worker (code tools), gui (screen), web
(DOM)."""

from __future__ import annotations

from harness.kernel.core import Tool
from harness.run.context import RunContext

from .delegate import SPECIALISTS, DelegateTool, ReportTool, available_specialists
from .desktop import Desktop
from .gui import ComputerTool, ScreenScale, screen_scale
from .web import Browser, web_tools

__all__ = [
    "SPECIALISTS",
    "Browser",
    "ComputerTool",
    "DelegateTool",
    "Desktop",
    "ReportTool",
    "ScreenScale",
    "available_specialists",
    "main_agent_extra_tools",
    "screen_scale",
    "web_tools",
]


def main_agent_extra_tools(context: RunContext) -> list[Tool]:
    """Tools the main agent gets besides its own: the `computer` tool itself when
    `config.main.computer` (the `no-act` ablation; `delegate` then offers no `gui`); none
    otherwise."""
    if not context.config.main.computer:
        return []
    desktop = Desktop(context.sandbox, tuple(context.config.sandbox.display_size))
    return [ComputerTool(desktop, context.model.name, context.stats)]
