"""Control modes: who decides the next step of a run.

Each mode is one module registering its `Controller` with `@control_mode(name)` (`registry.py`):
`stateact` (default) is the main agent with its tools, plus the hooks in `stateact.py`; `andor`
is StructuredAgent's framework-owned AND/OR tree (`andor/`); `lstc` is LocalLSTC's long-term
control state with short commitments, for small local models (`lstc/`); `structagent` is
StructAgent's planner -> actor -> verifier loop over the verifier-committed state (`structagent/`);
`screenshot` is the paper's baseline, a computer tool alone (`screenshot.py`). Every mode's
`finish` goes through `finish.finish_review`. Importing this package registers the modes below; a
new mode is one module and one line here.
"""

from __future__ import annotations

from . import andor, lstc, screenshot, stateact, structagent  # noqa: F401  (each registers its control mode)
from .registry import CONTROLLERS, Controller, control_mode, controller_for, run_control

__all__ = ["CONTROLLERS", "Controller", "control_mode", "controller_for", "run_control"]
