"""`proc.run`: one command with a timeout, its whole process group killed when the time is up.

It is the harness's own command channel (setup steps, getters, probes), never the agent's, so every
command runs in the observer flavour (see `observer.py`)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

from .errors import ToolError
from .observer import observer_argv, observer_env
from .output import BoundedOutput

DRAIN_S = 0.25
"""After the command's process ends, how long to go on reading output still in flight."""


class _OutputReader(threading.Thread):
    """Reads a pipe into a `BoundedOutput` until its last writer closes it."""

    def __init__(self, fd: int, max_output: int):
        super().__init__(name="proc-run-output", daemon=True)
        self.fd = fd
        self.lock = threading.Lock()
        self.output = BoundedOutput(max_output)

    def run(self) -> None:
        try:
            while data := os.read(self.fd, 65536):
                with self.lock:
                    self.output.feed(data)
        finally:
            os.close(self.fd)

    def finish(self) -> tuple[str, int]:
        with self.lock:
            return self.output.finish()


def run_process(argv: list[str], timeout: float, max_output: int, cwd: str) -> dict:
    """Run `argv`; over when its process ends, as an engine's exec is: a program it left in the
    background that still holds the output pipe neither holds the answer up nor is waited for
    (its later output is not read)."""
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            observer_argv(argv),
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.STDOUT,
            cwd=cwd if os.path.isdir(cwd) else "/",
            env=observer_env(os.environ),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_end)
        raise ToolError(f"cannot run {argv[0]!r}: {exc.strerror}.") from None
    finally:
        os.close(write_end)
    reader = _OutputReader(read_end, max_output)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    reader.join(DRAIN_S)
    text, cut = reader.finish()
    return {
        "exit_code": 124 if timed_out else process.returncode,
        "output": text,
        "timed_out": timed_out,
        "truncated_chars": cut,
    }
