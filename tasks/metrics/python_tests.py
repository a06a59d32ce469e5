"""OSWorld's check_python_file_by_test_suite (vscode.py): the task's test file, with the agent's
Python files beside it, is imported and its test function's return value is the score.

OSWorld imports that code into its evaluator process. StateAct runs it only inside a throwaway
sandbox (tasks/agent_code.py: a fresh container, offline, with CPU, memory, process and time
limits), as the sandbox's user, through the runner in the toolbox folder
(sandboxes/toolbox/python_test_runner.py), which hands the score back in a root-only file: what
the code prints or how it exits cannot forge it.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from harness.kernel.core import StateActError
from sandboxes.base import SANDBOX_HOME, TOOLBOX_PARENT
from tasks.agent_code import throwaway_sandbox
from tasks.metrics.registry import metric

TEST_TIMEOUT_S = 120
RUNNER = f"{TOOLBOX_PARENT}/toolbox/python_test_runner.py"
RESULT_FILE = "/root/stateact-test-result.json"
USER_UID = "1000"


@metric("check_python_file_by_test_suite")
def check_python_file_by_test_suite(
    actual_files: Any, test_file: str | None, test_function_name: str = "test", **_: Any
) -> float:
    """The score the test file's `test_function_name()` returns (bool, or a number clamped to [0,
    1]), run with the agent's files beside it; 0 when it fails, raises or runs out of time."""
    if not test_file or not Path(test_file).is_file():
        return 0.0
    files = actual_files if isinstance(actual_files, list) else [actual_files]
    folder = f"{SANDBOX_HOME}/stateact-test-{secrets.token_hex(4)}"
    with throwaway_sandbox() as sandbox:
        _checked(sandbox.exec(["mkdir", "-p", folder]), "make the test folder")
        for path in files:
            if path and Path(path).is_file():
                sandbox.copy_in(Path(path), f"{folder}/{Path(path).name}")
        test_copy = f"{folder}/{Path(test_file).name}"
        sandbox.copy_in(Path(test_file), test_copy)
        command = ["python3", "-I", RUNNER, folder, test_copy, test_function_name, RESULT_FILE]
        # Its exit status and output are the code's to choose: only the result file counts.
        sandbox.exec([*command, USER_UID], timeout=TEST_TIMEOUT_S, user="root")
        code, text = sandbox.exec(["cat", RESULT_FILE], user="root")
    if code != 0:
        return 0.0  # the runner was stopped at its time limit before it wrote a result
    try:
        return float(json.loads(text)["score"])
    except (ValueError, KeyError, TypeError):
        raise StateActError(f"the test runner wrote an unreadable result: {text[:200]!r}") from None


def _checked(done: tuple[int, str], what: str) -> None:
    code, output = done
    if code != 0:
        raise StateActError(f"could not {what} in the test sandbox: {output.strip()[-300:]}")
