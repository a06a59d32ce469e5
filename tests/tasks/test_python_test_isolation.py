"""check_python_file_by_test_suite runs the agent's code only in a throwaway container: what it must
not reach, it cannot, and the container is gone afterwards. (The forged-score attacks and their
honest twins are in test_redteam_gate.py.)"""

from __future__ import annotations

import pytest

from sandboxes.lifecycle import owner_label
from tasks.metrics import python_tests
from tasks.metrics.python_tests import check_python_file_by_test_suite
from tests.conftest import listed_containers, require_image

pytestmark = pytest.mark.docker

PROBE = """
import os, socket

def blocked(action):
    try:
        action()
    except Exception:
        return True
    return False

def connect():
    socket.create_connection(("127.0.0.1", 22), timeout=2)

def test():
    return (
        blocked(connect)
        and "STATEACT_SECRET" not in os.environ
        and not os.path.exists({host_file!r})
        and not os.path.exists("/var/lib/docker")
        and os.getuid() == 1000
        and not os.access("/root", os.R_OK)
    )
"""


@pytest.fixture(autouse=True)
def _image():
    require_image("base")


def stateact_containers() -> set[str]:
    """This process's containers (other StateAct processes on the engine start their own)."""
    return {c.id for c in listed_containers(f"stateact.owner={owner_label()}")}


def test_the_agent_code_sees_no_host_and_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEACT_SECRET", "sk-do-not-leak")
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("private")
    test_file = tmp_path / "test_suite.py"
    test_file.write_text(PROBE.format(host_file=str(host_file)))
    before = stateact_containers()
    assert check_python_file_by_test_suite([], str(test_file)) == 1.0
    assert stateact_containers() <= before  # the throwaway container is removed


def test_a_test_that_never_ends_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(python_tests, "TEST_TIMEOUT_S", 3)
    (tmp_path / "test_suite.py").write_text("def test():\n    while True:\n        pass\n")
    assert check_python_file_by_test_suite([], str(tmp_path / "test_suite.py")) == 0.0


def test_an_absent_test_file_scores_zero_without_a_sandbox(tmp_path):
    assert check_python_file_by_test_suite([], str(tmp_path / "absent.py")) == 0.0
