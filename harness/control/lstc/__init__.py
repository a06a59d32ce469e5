"""The `lstc` control mode: long-term control state with short commitments, for small local
models (`controller.py`; `abstract.py` abstracts each step, `gui.py` is the grounded GUI channel).
Importing the package registers the mode."""

from .controller import LstcController, LstcMode

__all__ = ["LstcController", "LstcMode"]
