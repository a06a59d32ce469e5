"""Typed toolbox calls: `run(sandbox, BashRun(command="ls"))` -> `CommandResult`.

The request and result types are the toolbox's own (`sandboxes/toolbox/protocol.py`, standard
library only); a sandbox's `call(method, **params)` carries them as one JSON line each way
(`sandboxes/client.py`). Tools, the gate, probes and observers call this instead of naming
methods as strings and reading results by key.
"""

from __future__ import annotations

from harness.kernel.core import ToolError
from sandboxes.toolbox.protocol import ProcRun, R, Request


def run(sandbox, request: Request[R], *, wait_s: float | None = None) -> R:
    """Run `request` in `sandbox`'s toolbox and return its typed result (`ToolError` for an
    error the model can act on, `SandboxError` when the sandbox is gone)."""
    return request.result(sandbox.call(request.METHOD, wait_s=wait_s, **request.params()))


NOT_STARTED = "timeout: failed to run command"
"""How the engine's exec answers a command it could not start (coreutils' `timeout` wraps it)."""


def exec_through_toolbox(sandbox, argv: list[str], timeout: float) -> tuple[int, str]:
    """`sandbox.exec` through the toolbox's process runner, answering as the engine's exec does:
    a command that cannot start is exit 127 (not found) or 126 with the wrapper's sentence."""
    try:
        result = run(sandbox, ProcRun(argv, timeout=timeout))
    except ToolError as exc:
        if not str(exc).startswith("cannot run "):
            raise
        code = 127 if "No such file" in str(exc) else 126
        return code, f"{NOT_STARTED} {argv[0]!r}: {str(exc).split(': ', 1)[-1]}\n"
    return result.exit_code, result.output
