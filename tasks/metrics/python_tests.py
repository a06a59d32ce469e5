"""OSWorld's check_python_file_by_test_suite (vscode.py): the task's test file, with the agent's
Python files beside it, is imported and its test function's return value is the score.

OSWorld imports that code into its evaluator process. StateAct runs it in a separate Python
process inside bubblewrap (Debian's `bubblewrap`, which `make setup`/.ci install): no network, a
read-only view of the system, an empty home and /tmp, no environment variables, a time limit;
only the folder holding the test and the agent's files is writable.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric

TEST_TIMEOUT_S = 120
MARKER = "STATEACT-TEST-SCORE "

RUNNER = Path(__file__).with_name("python_test_runner.py")


def isolation(folder: Path) -> list[str]:
    """The bubblewrap command prefix that confines the test run."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise StateActError(
            "check_python_file_by_test_suite runs the agent's code only inside bubblewrap: "
            "install Debian's bubblewrap (make setup does)"
        )
    python_home = Path(sys.base_prefix).resolve()
    return [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--tmpfs",
        "/root",
        "--tmpfs",
        "/home",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
        "--ro-bind",
        str(python_home),
        str(python_home),
        "--ro-bind",
        sys.prefix,
        sys.prefix,
        "--bind",
        str(folder),
        str(folder),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
    ]


@metric("check_python_file_by_test_suite")
def check_python_file_by_test_suite(
    actual_files: Any, test_file: str | None, test_function_name: str = "test", **_: Any
) -> float:
    """The score the test file's `test_function_name()` returns (bool, or a number clamped to [0,
    1]), run with the agent's files beside it; 0 when it fails, raises or runs out of time."""
    if not test_file or not Path(test_file).is_file():
        return 0.0
    files = actual_files if isinstance(actual_files, list) else [actual_files]
    with tempfile.TemporaryDirectory(prefix="stateact-pytest-") as scratch:
        folder = Path(scratch).resolve()
        for path in files:
            if path and Path(path).is_file():
                shutil.copyfile(path, folder / Path(path).name)
        test_copy = folder / Path(test_file).name
        shutil.copyfile(test_file, test_copy)
        # The runner is copied in: the project may sit in a home folder the isolation hides.
        runner = folder / ".stateact_runner.py"
        shutil.copyfile(RUNNER, runner)
        command = isolation(folder) + [sys.executable, "-I", str(runner)]
        command += [str(folder), str(test_copy), test_function_name, MARKER]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return 0.0
    scores = [line[len(MARKER) :] for line in done.stdout.splitlines() if line.startswith(MARKER)]
    return float(json.loads(scores[-1])) if scores else 0.0
