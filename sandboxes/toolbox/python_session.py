"""A persistent Python interpreter in a child process, so variables survive between cells.

The child runs `python_driver.py` as `-c` source (so the toolbox's own modules are not importable as
top-level names) with a request pipe and a result pipe of its own; its stdin is /dev/null, so a cell
calling input() fails at once instead of hanging, and its stdout+stderr are the cell's output.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from .bash_session import child_environment
from .output import BoundedOutput
from .screenless import wrapped

DRIVER_SOURCE = (Path(__file__).parent / "python_driver.py").read_text(encoding="utf-8")
INTERRUPT_GRACE_S = 2.0


class PythonSession:
    """One interpreter; `run` executes a cell in its globals and returns output and traceback."""

    def __init__(self, observer: bool = False, screenless: bool = False):
        # An observer's interpreter runs isolated (-I): no cwd, script folder or user site on
        # sys.path.
        self.observer = observer
        self.screenless = screenless  # no X display or session bus (screenless.py)
        self.process: subprocess.Popen | None = None
        self._pending_note = ""
        self._start()

    def _start(self) -> None:
        request_read, self._request_write = os.pipe()
        self._result_read, result_write = os.pipe()
        home = os.path.expanduser("~")
        argv = [
            sys.executable,
            *(["-I"] if self.observer else []),
            "-u",
            "-c",
            DRIVER_SOURCE,
            str(request_read),
            str(result_write),
        ]
        self.process = subprocess.Popen(
            wrapped(argv) if self.screenless else argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(request_read, result_write),
            env=child_environment(self.observer),
            cwd=home if os.path.isdir(home) else "/",
            start_new_session=True,
        )
        os.close(request_read)
        os.close(result_write)
        out_fd = self.process.stdout.fileno()
        fcntl.fcntl(out_fd, fcntl.F_SETFL, fcntl.fcntl(out_fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self._result_buffer = b""

    def close(self) -> None:
        if self.process is None:
            return
        for fd in (self._request_write, self._result_read):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        self.process.stdout.close()
        self.process = None

    def restart(self) -> None:
        self.close()
        self._start()

    def run(self, code: str, timeout: float, max_output: int, cwd: str) -> dict:
        note = ""
        if self.process is None or self.process.poll() is not None:
            note = self._pending_note or "[the previous Python interpreter had exited; "
            note += "this cell ran in a fresh one and earlier variables are gone]\n"
            self._pending_note = ""
            self.restart()
        collector = BoundedOutput(max_output)
        request = json.dumps({"code": code, "cwd": cwd}) + "\n"
        try:
            data = request.encode("utf-8", errors="replace")
            while data:
                data = data[os.write(self._request_write, data) :]
        except OSError:
            return self._died(collector, note)
        reply = self._collect(collector, time.monotonic() + timeout)
        if reply == "exited":
            return self._died(collector, note)
        if reply is not None:
            return self._result(note, collector, reply.get("error"), False, "")
        # Timed out: KeyboardInterrupt in the cell keeps the variables; a cell ignoring it costs
        # them.
        os.kill(self.process.pid, signal.SIGINT)
        reply = self._collect(collector, time.monotonic() + INTERRUPT_GRACE_S)
        if reply == "exited":
            return self._died(collector, note, timed_out=True)
        if reply is not None:
            message = (
                f"[cell timed out after {timeout:g} s and was interrupted; variables are kept]"
            )
            return self._result(note, collector, reply.get("error"), True, message)
        self.restart()
        message = (
            f"[cell timed out after {timeout:g} s and did not stop within {INTERRUPT_GRACE_S:g} s "
            f"of "
            "an interrupt; the interpreter was restarted and earlier variables are gone]"
        )
        return self._result(note, collector, None, True, message)

    def _died(self, collector: BoundedOutput, note: str, timed_out: bool = False) -> dict:
        code = self.process.wait() if self.process else None
        self._pending_note = "[the previous Python interpreter exited; "
        error = (
            f"The Python interpreter exited (exit code {code}); the next call starts a fresh one."
        )
        return self._result(note, collector, error, timed_out, "")

    @staticmethod
    def _result(note: str, collector: BoundedOutput, error, timed_out: bool, message: str) -> dict:
        output, cut = collector.finish()
        if message:
            output = f"{output}\n{message}" if output else message
        return {
            "output": note + output,
            "error": error,
            "timed_out": timed_out,
            "truncated_chars": cut,
        }

    def _collect(self, collector: BoundedOutput, deadline: float):
        """Read output until the result line arrives: returns it, None on timeout, or "exited"."""
        out_fd = self.process.stdout.fileno()
        watched = [out_fd, self._result_read]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select(watched, [], [], remaining)
            if out_fd in ready and not self._drain(out_fd, collector):
                watched.remove(out_fd)  # the cell closed its stdout; keep waiting for the result
            if self._result_read in ready:
                data = os.read(self._result_read, 65536)
                if not data:
                    self._drain(out_fd, collector)
                    return "exited"
                self._result_buffer += data
                if b"\n" in self._result_buffer:
                    line, _, self._result_buffer = self._result_buffer.partition(b"\n")
                    # The driver flushed before answering, so all of the cell's output is in the
                    # pipe.
                    self._drain(out_fd, collector)
                    return json.loads(line)

    @staticmethod
    def _drain(fd: int, collector: BoundedOutput) -> bool:
        """Read what is in the pipe now; False once it reached end of file."""
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            collector.feed(data)
