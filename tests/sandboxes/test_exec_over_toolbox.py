"""The docker backend runs the harness's commands through the toolbox's own process runner until
the agent has had the toolbox (the task's setup: a few ms each instead of an engine exec), and
through the engine from then on, in processes the agent never had a hand in."""

from __future__ import annotations

import base64
import time

import pytest

from sandboxes import SandboxConfig, open_sandbox
from tests.conftest import require_image

pytestmark = pytest.mark.slow

ANCESTRY = 'p=$$; while [ "$p" -gt 1 ]; do p=$(cut -d" " -f4 /proc/$p/stat); echo $p; done'


def ancestors(sandbox) -> set[int]:
    code, output = sandbox.exec(["sh", "-c", ANCESTRY])
    assert code == 0, output
    return {int(line) for line in output.split()}


def test_setup_commands_use_the_toolbox_then_the_engine():
    require_image("base")
    with open_sandbox(SandboxConfig(image="base")) as sandbox:
        toolbox_pid = int(sandbox.toolbox.hello["pid"])
        sandbox.call("file.write", path="/home/user/x.txt", data_b64="eA==")  # the harness's own
        assert toolbox_pid in ancestors(sandbox)
        code, output = sandbox.exec(["cat", "/home/user/x.txt"])
        assert (code, output) == (0, "x")
        sandbox.call("bash.run", command="true")  # the agent's session
        assert toolbox_pid not in ancestors(sandbox)
        code, output = sandbox.exec(["cat", "/home/user/x.txt"])
        assert (code, output) == (0, "x")


def test_rc_files_do_not_steer_the_toolbox_path():
    """The toolbox path keeps the observer flavour: a ~/.bashrc or BASH_ENV file written before
    any agent ran (by a task's files, say) is not read; the same command's honest output is."""
    require_image("base")
    with open_sandbox(SandboxConfig(image="base")) as sandbox:
        planted = "echo PLANTED"
        for name in (".bashrc", ".profile", ".bash_profile"):
            sandbox.call("file.write", path=f"/home/user/{name}", data_b64=_b64(planted))
        code, output = sandbox.exec(["bash", "-ic", "echo honest"])
        assert code == 0 and "honest" in output and "PLANTED" not in output
        # The twin: the same file is read by a shell that asks for it.
        code, output = sandbox.exec(["bash", "--norc", "-c", "source ~/.bashrc; echo honest"])
        assert code == 0 and "PLANTED" in output and "honest" in output


def test_a_background_program_does_not_hold_the_command_up():
    """As an engine exec: the command is over when its process ends, even when a program it left
    in the background keeps the output pipe open."""
    require_image("base")
    with open_sandbox(SandboxConfig(image="base")) as sandbox:
        started = time.monotonic()
        code, output = sandbox.exec(["bash", "-c", "echo before; sleep 60 & echo after"])
        assert (code, output) == (0, "before\nafter\n")
        assert time.monotonic() - started < 30  # not the background sleep's 60 s
        code, output = sandbox.exec(["bash", "-c", "exit 3"])
        assert code == 3
        code, output = sandbox.exec(["sleep", "30"], timeout=2)
        assert code == 124


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
