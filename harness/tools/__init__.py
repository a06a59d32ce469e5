"""The main agent's tools: each a small class that turns a model's call into toolbox calls in the
sandbox."""

from .bash import BashTool
from .editor import EditorTool
from .finish import FinishTool
from .plan import Plan, PlanTool
from .python import PythonTool
from .view_image import ViewImageTool

__all__ = [
    "BashTool",
    "EditorTool",
    "FinishTool",
    "Plan",
    "PlanTool",
    "PythonTool",
    "ViewImageTool",
]
