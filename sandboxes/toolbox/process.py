"""`proc.run`: one command with a timeout, its whole process group killed when the time is up.

It is the harness's own command channel (setup steps, getters, probes), never the agent's, so every
command runs in the observer flavour (see `observer.py`)."""

from __future__ import annotations

import os
import signal
import subprocess

from .errors import ToolError
from .observer import observer_argv, observer_env
from .output import BoundedOutput


def run_process(argv: list[str], timeout: float, max_output: int, cwd: str) -> dict:
    try:
        process = subprocess.Popen(
            observer_argv(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd if os.path.isdir(cwd) else "/",
            env=observer_env(os.environ),
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"cannot run {argv[0]!r}: {exc.strerror}.") from None
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    collected = BoundedOutput(max_output)
    collected.feed(output)
    text, cut = collected.finish()
    return {
        "exit_code": 124 if timed_out else process.returncode,
        "output": text,
        "timed_out": timed_out,
        "truncated_chars": cut,
    }
