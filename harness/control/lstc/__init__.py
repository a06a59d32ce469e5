"""The `lstc` control mode (LocalLSTC): long-term control state with short commitments, for small
local models. `controller.py` is the algorithm; `state.py` the control state and commitment parser;
`channels.py` the execution boundary (bash, python, GUI via `gui.py`, WAIT); `suppress.py` the
pre-execution repeat checks; `step.py`, `abstract.py` and `region.py` Step Abstraction and context
refinement; `verify.py` Final Verification. Importing the package registers the mode."""

from .controller import LstcController, LstcMode

__all__ = ["LstcController", "LstcMode"]
