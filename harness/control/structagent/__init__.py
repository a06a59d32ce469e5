"""The `structagent` control mode (StructAgent, §3-4 and Appendix C): planner -> actor -> verifier
over the verifier-committed unified state (`controller.py`); the per-subgoal verifier
(`verifier.py`); the DONE audit and targeted recovery (`recovery.py`); what the initializer and the
visual verifier see of the screen (`observe.py`). Importing the package registers the mode."""

from .controller import StructAgentController

__all__ = ["StructAgentController"]
