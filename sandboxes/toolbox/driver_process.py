"""The desktop and browser drivers as toolbox methods: each driver lives in a child process.

A driver (`drivers/desktop.py`, `drivers/browser.py`) ships with the toolbox, so it reaches the
sandbox once, with the toolbox's root-owned source, and is never sent again. Its process keeps the
X connection or the browser between calls; a call is one request line to it and one reply (a JSON
header plus the PNG bytes, if any) back, and the toolbox turns the PNG into the one base64 field of
its own answer. A call that overstays its timeout is interrupted; a driver that does not stop or
that died is replaced by a fresh one on the next call.
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from .bash_session import child_environment
from .errors import BadRequest, ToolError

DRIVERS_DIR = Path(__file__).parent / "drivers"
RUNNER_SOURCE = (DRIVERS_DIR / "runner.py").read_text(encoding="utf-8")
FUNCTIONS = {
    "desktop": ("start", "screenshot", "act", "zoom", "cursor", "launch", "windows"),
    "browser": ("navigate", "read_dom", "run_js", "click", "fill", "select"),
}
"""The functions each driver offers; the toolbox's methods are `desktop.act`, `browser.click`..."""
INTERRUPT_GRACE_S = 2.0
LOG_TAIL_CHARS = 600


class DriverProcess:
    """One driver module served by one child interpreter, started on the first call."""

    def __init__(self, name: str, workdir: str):
        self.name = name
        self.workdir = workdir
        self.log_path = os.path.join(workdir, f"driver-{name}.log")
        self.process: subprocess.Popen | None = None

    def _start(self) -> None:
        request_read, self._requests = os.pipe()
        self._results, result_write = os.pipe()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-u",
                    "-c",
                    RUNNER_SOURCE,
                    str(DRIVERS_DIR / f"{self.name}.py"),
                    str(request_read),
                    str(result_write),
                    self.workdir,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(request_read, result_write),
                env=child_environment(),
                cwd="/",
                start_new_session=True,
            )
        os.close(request_read)
        os.close(result_write)
        self._buffer = bytearray()

    def close(self) -> None:
        if self.process is None:
            return
        for fd in (self._requests, self._results):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the browser goes with its driver
        except OSError:
            pass
        self.process.wait()
        self.process = None

    def call(self, function: str, args: dict, timeout: float) -> dict:
        """The driver's result for `function(**args)`; a screenshot comes back as `png_b64`."""
        if self.process is None or self.process.poll() is not None:
            self.close()
            self._start()
        request = json.dumps({"function": function, "args": args}).encode() + b"\n"
        try:
            while request:
                request = request[os.write(self._requests, request) :]
        except OSError:
            self._died(function)
        reply = self._read_reply(time.monotonic() + timeout, function)
        if reply is None:
            try:
                os.kill(self.process.pid, signal.SIGINT)
            except OSError:
                self._died(function)
            reply = self._read_reply(time.monotonic() + INTERRUPT_GRACE_S, function)
            if reply is None:
                self.close()
            raise ToolError(
                f"the {self.name} driver did not finish {function} within {timeout:g} s"
                + ("." if reply else "; it was restarted and starts afresh on the next call.")
            )
        header, payload = reply
        if not header.get("ok"):
            error = header.get("error") or f"{function} failed."
            raise BadRequest(error) if header.get("kind") == "BadRequest" else ToolError(error)
        result = header.get("result") or {}
        if header.get("binary"):
            result["png_b64"] = base64.b64encode(payload).decode("ascii")
        return result

    def _read_reply(self, deadline: float, function: str) -> tuple[dict, bytes] | None:
        """The header and payload once both arrived; None at the deadline."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                header = json.loads(self._buffer[:end])
                size = int(header.get("binary") or 0)
                if len(self._buffer) >= end + 1 + size:
                    payload = bytes(self._buffer[end + 1 : end + 1 + size])
                    del self._buffer[: end + 1 + size]
                    return header, payload
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._results], [], [], remaining)
            if ready:
                chunk = os.read(self._results, 1 << 20)
                if not chunk:
                    self._died(function)
                self._buffer.extend(chunk)

    def _died(self, function: str):
        code = self.process.wait() if self.process else None
        self.close()
        raise ToolError(
            f"the {self.name} driver exited (code {code}) during {function}; the next call starts "
            f"a fresh one. Its log ends: {self._log_tail() or '(empty)'}"
        )

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - LOG_TAIL_CHARS))
                return log.read().decode(errors="replace").strip()
        except OSError:
            return ""
