"""The observer flavour on the local backend: nothing the agent writes steers what the harness sees,
and the sandbox's python is the harness's own environment."""

from __future__ import annotations

import dataclasses
import os
import sys

import pytest

from sandboxes import open_sandbox
from sandboxes.toolbox.observer import SAFE_DESKTOP_ENV
from tasks.getters import SandboxSource
from tests.redteam_plant import plant_script

HARNESS_PREFIX = os.path.realpath(sys.prefix)
READ_OPENPYXL = "import openpyxl, sys; print('FROM', openpyxl.__file__); print('PATH', sys.path)"
REAL_OPENPYXL = os.path.realpath(__import__("openpyxl").__file__)


def prefix_of(text: str) -> str:
    return os.path.realpath(text.strip().splitlines()[-1])


def test_the_local_sandbox_python_is_the_harness_environment(local_sandbox):
    # The toolbox's own interpreter (its ready line) and every way the agent reaches python3.
    assert os.path.realpath(local_sandbox.toolbox.hello["prefix"]) == HARNESS_PREFIX
    print_prefix = "import sys; print(sys.prefix)"
    for command in (
        f"python3 -c '{print_prefix}'",
        f"python -c '{print_prefix}'",
        f"bash -lc \"python3 -c '{print_prefix}'\"",
        f"/usr/bin/env python3 -c '{print_prefix}'",
    ):
        output = local_sandbox.call("bash.run", command=command)["output"]
        assert prefix_of(output) == HARNESS_PREFIX, command
    cell = local_sandbox.call("python.run", code=print_prefix)["output"]
    assert prefix_of(cell) == HARNESS_PREFIX
    code, output = local_sandbox.exec(["python3", "-c", print_prefix])
    assert code == 0 and prefix_of(output) == HARNESS_PREFIX
    # The toolbox's own packages come from that environment, whatever the base python lacks.
    code, output = local_sandbox.exec(["python3", "-c", "import PIL, pexpect, openpyxl"])
    assert code == 0, output


@pytest.fixture
def planted(local_sandbox):
    result = local_sandbox.call("bash.run", command=plant_script(), timeout=60)
    assert result["exit_code"] == 0 and "planted" in result["output"], result["output"]
    return local_sandbox


def assert_honest(output: str) -> None:
    """The openpyxl imported is the harness environment's, not one the kit planted (in the home,
    /tmp, the user site): checked by its path, wherever the checkout and its venv live."""
    assert "CAPTURED" not in output, output
    imported = [line.split(" ", 1)[1] for line in output.splitlines() if line.startswith("FROM ")]
    assert imported, output
    for path in imported:
        assert os.path.realpath(path) == REAL_OPENPYXL, output


def test_the_agent_keeps_its_normal_python(planted):
    # Proof that the kit is live: the agent's own interpreter imports its ~/openpyxl.py.
    cell = planted.call("python.run", code=READ_OPENPYXL)["output"]
    assert "FROM /home/user/openpyxl.py" in cell


def test_observers_on_the_live_sandbox_ignore_the_kit(planted):
    code, output = planted.exec(["python3", "-c", READ_OPENPYXL])
    assert code == 0
    assert_honest(output)
    code, output = planted.exec(
        ["bash", "-c", f"{SAFE_DESKTOP_ENV}type python3 cat ls; echo PP=$PYTHONPATH; {_run_py()}"]
    )
    assert code == 0 and "PP=\n" in output and "/home/user" not in output.split("FROM")[0]
    assert_honest(output)
    for session in ("bash.run", "python.run"):
        params = {"command": _run_py()} if session == "bash.run" else {"code": READ_OPENPYXL}
        assert_honest(planted.call(session, observer=True, session="probe", **params)["output"])
    source = SandboxSource(planted)
    assert_honest(source.run_command(_run_py(), shell=True)["output"])
    assert_honest(source.run_command(["python3", "-c", READ_OPENPYXL], shell=False)["output"])


def test_a_snapshot_observer_sandbox_ignores_the_kit(planted):
    snapshot = planted.snapshot()
    try:
        config = dataclasses.replace(planted.config, observer=True)
        with open_sandbox(config, snapshot) as view:
            assert view.toolbox.hello["observer"] is True
            assert os.path.realpath(view.toolbox.hello["prefix"]) == HARNESS_PREFIX
            assert view.call("file.stat", path="/home/user/absent.xlsx")["exists"] is False
            shell = view.call("bash.run", command=f"type python3 cat ls; {_run_py()}")
            assert "/home/user" not in shell["output"].split("FROM")[0]
            assert_honest(shell["output"])
            assert_honest(view.call("python.run", code=READ_OPENPYXL)["output"])
    finally:
        planted.discard_snapshot(snapshot)


def _run_py() -> str:
    return f'python3 -c "{READ_OPENPYXL}"'


def test_observer_env_and_argv_drop_what_loads_code():
    from sandboxes.toolbox.observer import OBSERVER_PATH, observer_argv, observer_env

    hostile = {
        "HOME": "/home/user",
        "LANG": "C.UTF-8",
        "PYTHONPATH": "/home/user/evil",
        "PYTHONSTARTUP": "/home/user/evil/startup.py",
        "BASH_ENV": "/home/user/evil/bashenv",
        "ENV": "/home/user/evil/bashenv",
        "BASH_FUNC_python3%%": "() { echo 42; }",
        "LD_PRELOAD": "/home/user/evil.so",
        "PATH": "/home/user/bin:/usr/bin",
        "GIT_DIR": "/home/user/evil",
    }
    env = observer_env(hostile)
    assert env["HOME"] == "/home/user" and env["LANG"] == "C.UTF-8"
    assert env["PATH"] == OBSERVER_PATH and "/home" not in env["PATH"] and "/tmp" not in env["PATH"]
    for gone in ("PYTHONPATH", "PYTHONSTARTUP", "BASH_ENV", "ENV", "LD_PRELOAD", "GIT_DIR"):
        assert gone not in env
    # Only the harness's own function (sqlite3 without ~/.sqliterc), never one handed in.
    assert [key for key in env if key.startswith("BASH_FUNC_")] == ["BASH_FUNC_sqlite3%%"]
    assert env["MAGIC"] == "/usr/lib/file/magic.mgc"  # `file` ignores ~/.magic
    assert observer_argv(["sqlite3", "-readonly", "db"]) == [
        "sqlite3",
        "-init",
        "/dev/null",
        "-readonly",
        "db",
    ]
    assert env["PYTHONSAFEPATH"] == env["PYTHONNOUSERSITE"] == "1"
    assert observer_argv(["python3", "-c", "x"]) == ["python3", "-I", "-c", "x"]
    assert observer_argv(["/usr/bin/python3.11", "x.py"])[1] == "-I"
    assert observer_argv(["bash", "-c", "ls"]) == ["bash", "--norc", "--noprofile", "-c", "ls"]
    assert observer_argv(["ls", "-l"]) == ["ls", "-l"]
