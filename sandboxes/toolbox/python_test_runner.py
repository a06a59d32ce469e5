"""OSWorld's import-and-call of a task's test function, run as root inside a throwaway sandbox by
check_python_file_by_test_suite (tasks/metrics/python_tests.py); never imported by StateAct.

The test, and the agent's code it imports, run in a child process as the sandbox's user, with no
stdin, stdout or stderr. The score comes back to this (root) process over a pipe as exactly one
record, and only if the child ends normally; this process writes it to a root-only file that the
harness reads. So output the code prints (a forged score line), an exit before the test returns,
or a second record all give 0. What stays open: code imported into the test's own process can
change what the test returns, as it can in OSWorld, where the test runs in the evaluator itself.

Usage: python3 -I python_test_runner.py FOLDER TEST_FILE FUNCTION_NAME RESULT_FILE UID
"""

import importlib.util
import json
import os
import select
import sys

MAX_RECORD = 4096


def score(folder: str, test_file: str, name: str) -> float:
    os.chdir(folder)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location("stateact_test_suite", test_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules["stateact_test_suite"] = module
        spec.loader.exec_module(module)
        test = getattr(module, name, None)
        if not callable(test):
            return 0.0
        result = test()
    except BaseException:  # noqa: BLE001 -- whatever the test does, it scores 0 when it fails
        return 0.0
    if isinstance(result, bool):
        return 1.0 if result else 0.0
    if isinstance(result, int | float):
        return max(0.0, min(1.0, float(result)))
    return 1.0 if bool(result) else 0.0


def run_child(write_end: int, folder: str, test_file: str, name: str, uid: int) -> None:
    """The child: drop to the user, silence the standard streams, run the test, send one record."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    os.environ.update(HOME=folder, USER="user")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    value = score(folder, test_file, name)
    os.write(write_end, (json.dumps({"score": value}) + "\n").encode())
    os._exit(0)


def drain(read_end: int, received: bytes, wait_s: float) -> bytes:
    """`received` plus what the pipe holds now (waiting up to `wait_s`), at most MAX_RECORD."""
    ready, _, _ = select.select([read_end], [], [], wait_s)
    while ready and len(received) <= MAX_RECORD:
        chunk = os.read(read_end, MAX_RECORD)
        if not chunk:
            break
        received += chunk
        ready, _, _ = select.select([read_end], [], [], 0)
    return received


def verdict(received: bytes, status: int) -> tuple[float, str | None]:
    """The score the child sent and why it does not count, if it does not."""
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return 0.0, "the test process did not end normally"
    lines = received.decode(errors="replace").splitlines()
    if len(lines) != 1:
        return 0.0, f"the test process sent {len(lines)} results, not one"
    try:
        value = float(json.loads(lines[0])["score"])
    except (ValueError, KeyError, TypeError):
        return 0.0, "the test process sent a malformed result"
    if not 0.0 <= value <= 1.0:  # also NaN
        return 0.0, "the test process sent a score outside [0, 1]"
    return value, None


def main(folder: str, test_file: str, name: str, result_file: str, uid: int) -> None:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        run_child(write_end, folder, test_file, name, uid)
    os.close(write_end)
    received = b""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        # Once the child is gone, only what it had sent counts (a leftover may hold the pipe).
        received = drain(read_end, received, 0 if done == pid else 0.1)
        if done == pid:
            break
    value, reason = verdict(received, status)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    with os.fdopen(os.open(result_file, flags, 0o600), "w") as out:
        json.dump({"score": value, "reason": reason}, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
