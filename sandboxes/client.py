"""The host side of the toolbox RPC: JSON lines over a `Channel`, one request at a time."""

from __future__ import annotations

import itertools
import json
import threading

from harness.kernel.core import ToolError

from .base import Channel, SandboxError

# Beyond a method's own timeout the host allows this much for the toolbox to answer, so a command
# that times out inside the sandbox still returns its partial output rather than a host timeout.
ANSWER_GRACE_S = 30.0
DEFAULT_CALL_TIMEOUT_S = 300.0


class ToolboxClient:
    """Calls methods of the toolbox running inside a sandbox."""

    def __init__(self, channel: Channel, sandbox_id: str):
        self.channel = channel
        self.sandbox_id = sandbox_id
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._broken: str | None = None
        self.hello: dict = {}
        """The toolbox's ready line: its pid, python version and sys.prefix."""

    def wait_ready(self, timeout: float) -> dict:
        try:
            line = self.channel.read_line(timeout)
        except TimeoutError:
            raise SandboxError(
                f"the toolbox in sandbox {self.sandbox_id} did not start within {timeout:.0f} s."
            ) from None
        try:
            hello = json.loads(line)
        except json.JSONDecodeError:
            raise SandboxError(
                f"the toolbox in sandbox {self.sandbox_id} printed {line[:200]!r} "
                "instead of its ready line."
            ) from None
        if not isinstance(hello, dict) or not hello.get("ready"):
            raise SandboxError(f"the toolbox in sandbox {self.sandbox_id} did not report ready.")
        self.hello = hello
        return hello

    def call(self, method: str, *, wait_s: float | None = None, **params) -> dict:
        """Run `method` in the toolbox; raises ToolError for errors the model can act on.

        `wait_s` bounds how long the host waits for the answer; by default the method's own
        `timeout` param plus a grace period.
        """
        if self._broken:
            raise SandboxError(self._broken)
        wait = _answer_timeout(params, wait_s)
        with self._lock:
            request_id = next(self._ids)
            payload = json.dumps({"id": request_id, "method": method, "params": params})
            self.channel.send_line(payload.encode())
            while True:
                try:
                    line = self.channel.read_line(wait)
                except TimeoutError:
                    self._broken = (
                        f"the toolbox in sandbox {self.sandbox_id} stopped answering ({method})."
                    )
                    raise SandboxError(self._broken) from None
                except SandboxError as exc:
                    self._broken = str(exc)
                    raise
                reply = json.loads(line)
                if reply.get("id") == request_id:
                    break
        if "error" in reply:
            error = reply["error"]
            raise ToolError(error.get("message") or f"{method} failed ({error.get('type')}).")
        return reply["result"]


def _answer_timeout(params: dict, wait_s: float | None) -> float:
    if wait_s is not None:
        return wait_s
    own = params.get("timeout")
    if isinstance(own, int | float):
        return float(own) + ANSWER_GRACE_S
    return DEFAULT_CALL_TIMEOUT_S
