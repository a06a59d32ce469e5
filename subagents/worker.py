"""The worker: a fresh-context copy of the main agent's code tools, ending with `report(text)`."""

from __future__ import annotations

from harness.kernel.core import Tool
from harness.tools import BashTool, EditorTool, Plan, PlanTool, PythonTool, ViewImageTool
from sandboxes.toolbox.protocol import BashRestart, PythonRestart
from sandboxes.typed import run


def worker_session(depth: int) -> str:
    """The worker's own bash session, so its `cd` never moves the main agent's shell."""
    return f"worker-{depth}"


def worker_tools(sandbox, depth: int, plan: Plan) -> list[Tool]:
    """bash (own session, restarted fresh), python, the editor, view_image and its own plan."""
    session = worker_session(depth)
    # a fresh context gets a fresh shell and interpreter
    run(sandbox, BashRestart(session=session))
    run(sandbox, PythonRestart(session=session))
    return [
        BashTool(sandbox, session=session),
        PythonTool(sandbox, session=session),
        EditorTool(sandbox),
        ViewImageTool(sandbox),
        PlanTool(plan),
    ]


def plan_note(plan: Plan):
    """The note that shows the worker its plan on every request, as the main agent sees its own."""
    return lambda: f"<plan>\n{plan.render()}\n</plan>" if plan.items else ""
