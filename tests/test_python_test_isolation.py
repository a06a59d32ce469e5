"""check_python_file_by_test_suite runs the agent's code confined: what it must not reach, it
cannot."""

from __future__ import annotations

import socket

import pytest

from harness.kernel.core import StateActError
from tasks.metrics import python_tests
from tasks.metrics.python_tests import check_python_file_by_test_suite

PROBE = """
import os, socket

def blocked(action):
    try:
        action()
    except Exception:
        return True
    return False

def write_outside():
    with open({outside!r}, "w") as f:
        f.write("escaped")

def connect():
    socket.create_connection(("127.0.0.1", {port}), timeout=2)

def test():
    return (
        blocked(write_outside)
        and blocked(connect)
        and "STATEACT_SECRET" not in os.environ
        and not os.path.exists({home_file!r})
    )
"""


def test_the_agent_code_cannot_write_out_reach_the_host_or_read_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEACT_SECRET", "sk-do-not-leak")
    outside = tmp_path / "outside.txt"
    home_file = tmp_path.home() / ".stateact-isolation-probe"
    home_file.write_text("private")
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        port = listener.getsockname()[1]
        test_file = tmp_path / "test_suite.py"
        probe = PROBE.format(outside=str(outside), port=port, home_file=str(home_file))
        test_file.write_text(probe)
        assert check_python_file_by_test_suite([], str(test_file)) == 1.0
        assert not outside.exists()
    finally:
        listener.close()
        home_file.unlink()


def test_a_test_that_never_ends_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(python_tests, "TEST_TIMEOUT_S", 2)
    (tmp_path / "test_suite.py").write_text("def test():\n    while True:\n        pass\n")
    assert check_python_file_by_test_suite([], str(tmp_path / "test_suite.py")) == 0.0


def test_without_bubblewrap_it_refuses_to_run_the_code(tmp_path, monkeypatch):
    (tmp_path / "test_suite.py").write_text("def test():\n    return True\n")
    monkeypatch.setattr(python_tests.shutil, "which", lambda name: None)
    with pytest.raises(StateActError, match="bubblewrap"):
        check_python_file_by_test_suite([], str(tmp_path / "test_suite.py"))
    assert check_python_file_by_test_suite([], str(tmp_path / "absent.py")) == 0.0
