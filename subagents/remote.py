"""Calls into a driver module that lives in a named Python session inside the sandbox.

The desktop and browser drivers are plain Python sources (`desktop_driver.py`, `browser_driver.py`)
that run in their own persistent interpreter in the sandbox (toolbox `python.run` with `session`), so
the X connection and the browser survive between calls and each action is one RPC. A driver exposes
`_sa_call(name, args_json)`, which prints one result line after a marker; anything else the driver or
its libraries print is ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.kernel.core import ToolError

MARKER = "@@STATEACT-RESULT@@ "
MAX_OUTPUT_CHARS = 64_000_000  # screenshots travel as base64 inside the result line


class DriverError(ToolError):
    """The driver reported a problem the model can act on (bad selector, unknown key, ...)."""


class RemoteDriver:
    """One driver module loaded into one named Python session of a sandbox."""

    def __init__(self, sandbox, session: str, source_file: Path):
        self.sandbox = sandbox
        self.session = session
        self.source = source_file.read_text(encoding="utf-8")

    def call(self, function: str, timeout: float = 60.0, **args) -> dict:
        """Run `function(**args)` in the driver; returns its result dict or raises DriverError."""
        # The guard reloads the driver when the interpreter was restarted (it died or timed out).
        code = (
            "if '_sa_call' not in globals():\n"
            f"    exec(compile({self.source!r}, '<stateact-driver>', 'exec'), globals())\n"
            f"_sa_call({function!r}, {json.dumps(args, ensure_ascii=False)!r})\n"
        )
        reply = self.sandbox.call(
            "python.run",
            code=code,
            session=self.session,
            timeout=float(timeout),
            max_output=MAX_OUTPUT_CHARS,
        )
        output = reply.get("output") or ""
        line = _result_line(output)
        if line is None:
            detail = (reply.get("error") or output or "no output").strip()
            raise ToolError(f"The {self.session} driver failed: {detail[-800:]}")
        result = json.loads(line)
        if not result.get("ok"):
            raise DriverError(result.get("error") or "the driver reported an unnamed error.")
        return result.get("result") or {}


def _result_line(output: str) -> str | None:
    position = output.rfind(MARKER)
    if position < 0:
        return None
    return output[position + len(MARKER) :].split("\n", 1)[0]
