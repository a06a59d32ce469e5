"""The `andor` control mode: a framework-owned AND/OR tree whose action nodes run workers
(`controller.py` walks and repairs it; `tree.py` holds it, `parse.py` reads the planner's answers,
`actions.py` runs action nodes, `memory.py` keeps the candidate table, `inject.py` the user's
mid-run instructions). Importing the package registers the mode."""

from .controller import AndOrController, AndOrMode

__all__ = ["AndOrController", "AndOrMode"]
