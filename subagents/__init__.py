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
    """Tools the main agent gets besides its own: the task's (`context.extra_tools`, OSWorld 2.0's
    ask_user) and the `computer` tool itself when `config.main.computer` (the `no-act` ablation;
    `delegate` then offers no `gui`)."""
    tools = list(context.extra_tools)
    if not context.config.main.computer:
        return tools
    desktop = Desktop(context.sandbox, tuple(context.config.sandbox.display_size))
    return [*tools, ComputerTool(desktop, context.model.name, context.stats)]
