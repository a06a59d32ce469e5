"""Typed toolbox calls: `run(sandbox, BashRun(command="ls"))` -> `CommandResult`.

The request and result types are the toolbox's own (`sandboxes/toolbox/protocol.py`, standard
library only); a sandbox's `call(method, **params)` carries them as one JSON line each way
(`sandboxes/client.py`). Tools, the gate, probes and observers call this instead of naming
methods as strings and reading results by key.
"""

from __future__ import annotations

from sandboxes.toolbox.protocol import R, Request


def run(sandbox, request: Request[R], *, wait_s: float | None = None) -> R:
    """Run `request` in `sandbox`'s toolbox and return its typed result (`ToolError` for an
    error the model can act on, `SandboxError` when the sandbox is gone)."""
    return request.result(sandbox.call(request.METHOD, wait_s=wait_s, **request.params()))
