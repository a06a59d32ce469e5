"""One hook before every model API request, so workers that share an API key can share one budget.

Nothing is installed by default. A scale-out runner installs a gate (for example a cluster-wide
token bucket) in each worker process; the retry loop of every provider calls `before_request()`
before each attempt, retries included.
"""

from __future__ import annotations

from collections.abc import Callable

RequestGate = Callable[[], None]
_gate: RequestGate | None = None


def set_request_gate(gate: RequestGate | None) -> None:
    """Install `gate` (it blocks until a request may go out) for this process; None removes it."""
    global _gate
    _gate = gate


def before_request() -> None:
    """Wait for the installed gate, if any."""
    if _gate is not None:
        _gate()
