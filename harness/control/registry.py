"""The control modes: the `Controller` shape and the registry the runner picks a mode from.

A control mode is a class with `run(context) -> Finished | BudgetExceeded`, registered under its
name with `@control_mode("name")` in a module of its own; `harness/control/__init__.py` imports
the members so that every mode is registered once the package is imported (as `tasks/metrics/`
does for metrics). The runner hands the mode the run's `RunContext` after setup and scores
whatever state it leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from harness.kernel.core import BudgetExceeded, Finished, require_one_of
from harness.run.context import RunContext


class Controller(Protocol):
    """Decides the steps of one run until it ends: finished (by its own or the gate's word) or out
    of budget. Raises `StateActError` for what the user must fix (the runner records it)."""

    def run(self, context: RunContext) -> Finished | BudgetExceeded: ...


CONTROLLERS: dict[str, Callable[[], Controller]] = {}
"""Mode name -> the class (or factory) of its controller; one instance per run."""


def control_mode(name: str):
    """Register the decorated controller class under `name` (`--control name`)."""

    def register(factory: Callable[[], Controller]):
        if name in CONTROLLERS and CONTROLLERS[name] is not factory:
            raise ValueError(f"control mode {name!r} is registered twice")
        CONTROLLERS[name] = factory
        return factory

    return register


def controller_for(name: str) -> Controller:
    """A fresh controller of the mode `name`; a `StateActError` naming the modes when unknown."""
    return CONTROLLERS[require_one_of("control mode", name, tuple(CONTROLLERS))]()


def run_control(context: RunContext) -> Finished | BudgetExceeded:
    """Run the task under the control mode `context.config.control`."""
    controller = controller_for(context.config.control)
    if context.outcome is not None:
        context.outcome.status = "running"
    return controller.run(context)
