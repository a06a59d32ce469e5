"""The docker backend against real containers: sessions, limits, cleanup, and bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from harness.kernel.core import ToolError
from sandboxes import SandboxConfig, SandboxError, open_sandbox
from tests.conftest import REPO, listed_containers, require_image, stateact

pytestmark = pytest.mark.docker


def test_cli_exec_runs_as_user_offline_with_office_libraries():
    require_image("desktop")
    script = 'id -un; echo $HOME; python3 -c "import openpyxl, docx, pptx, lxml"; ls /sys/class/net'
    done = stateact("sandbox", "exec", "--", "bash", "-lc", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["user", "/home/user", "lo"]


def test_cli_exec_passes_the_exit_code():
    require_image("desktop")
    assert stateact("sandbox", "exec", "--", "false").returncode == 1


def test_timeout_returns_partial_output_and_session_survives(base_sandbox):
    result = base_sandbox.call("bash.run", command="echo start; sleep 5; echo never", timeout=1)
    assert result["timed_out"] and "start" in result["output"] and "never" not in result["output"]
    assert base_sandbox.call("bash.run", command="echo ok")["output"].strip() == "ok"


def test_command_waiting_on_stdin_is_ended_by_the_timeout(base_sandbox):
    started = time.monotonic()
    result = base_sandbox.call("bash.run", command="cat", timeout=1)
    assert result["timed_out"] and time.monotonic() - started < 10
    assert base_sandbox.call("bash.run", command="echo after")["output"].strip() == "after"


def test_exit_restarts_the_session(base_sandbox):
    base_sandbox.call("bash.run", command="export MARK=1; exit")
    result = base_sandbox.call("bash.run", command="echo ${MARK:-unset}")
    assert "unset" in result["output"]


def test_ten_megabytes_of_output_are_cut_in_the_middle(base_sandbox):
    command = "printf 'HEAD'; head -c 10000000 /dev/zero | tr '\\0' a; printf 'TAIL'"
    result = base_sandbox.call("bash.run", command=command, max_output=30000)
    assert result["output"].startswith("HEAD") and result["output"].rstrip().endswith("TAIL")
    assert result["truncated_chars"] > 9_900_000
    assert len(result["output"]) < 31000


def test_fork_bomb_is_contained():
    # A sandbox of its own: the bomb keeps its process table full until the container goes.
    require_image("base")
    from sandboxes.docker_backend import LABEL

    with open_sandbox(SandboxConfig(image="base", memory_mb=512, pids_limit=128)) as sandbox:
        bomb = "bomb() { bomb | bomb & }; bomb"
        sandbox.call("bash.run", command=bomb, session="bomb", timeout=5)
        subprocess.run(["true"], check=True)  # the host can still start processes
        stats = sandbox.container.stats(stream=False)
        assert 0 < stats["pids_stats"]["current"] <= 128  # held at the sandbox's limit
        name = sandbox.id
    names = {c.name for c in listed_containers(LABEL)}
    assert name not in names  # closing removed the container with the bomb in it


def test_huge_allocation_is_contained(base_sandbox):
    code = "x = bytearray(10 * 1024**3)"
    result = base_sandbox.call("bash.run", command=f"python3 -c '{code}'; echo exit=$?", timeout=60)
    assert "exit=0" not in result["output"]  # killed by the memory limit or refused
    assert base_sandbox.call("bash.run", command="echo fine")["output"].strip() == "fine"


def test_python_session_keeps_variables(base_sandbox):
    base_sandbox.call("python.run", code="total = 40 + 2")
    assert base_sandbox.call("python.run", code="print(total)")["output"].strip() == "42"


def test_copy_in_and_out(base_sandbox, tmp_path):
    source = tmp_path / "in.bin"
    source.write_bytes(os.urandom(1 << 20))
    base_sandbox.copy_in(source, "/home/user/deep/dir/in.bin")
    owner = base_sandbox.call("bash.run", command="stat -c %U /home/user/deep/dir/in.bin")["output"]
    assert owner.strip() == "user"
    base_sandbox.copy_out("/home/user/deep/dir/in.bin", tmp_path / "out.bin")
    assert (tmp_path / "out.bin").read_bytes() == source.read_bytes()
    with pytest.raises(FileNotFoundError):
        base_sandbox.copy_out("/home/user/missing", tmp_path / "missing")


def test_snapshot_is_independent(base_sandbox):
    base_sandbox.call("bash.run", command="echo v1 > /home/user/state.txt")
    snapshot = base_sandbox.snapshot()
    try:
        with open_sandbox(base_sandbox.config, snapshot) as view:
            assert view.call("bash.run", command="cat state.txt")["output"].strip() == "v1"
            view.call("bash.run", command="rm state.txt")
        assert base_sandbox.call("bash.run", command="cat state.txt")["output"].strip() == "v1"
    finally:
        base_sandbox.discard_snapshot(snapshot)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"command": "view", "path": "relative.txt"}, "absolute"),
        ({"command": "view", "path": "/home/user/nope.txt"}, "does not exist"),
        (
            {
                "command": "str_replace",
                "path": "/home/user/edit.txt",
                "old_str": "zzz",
                "new_str": "y",
            },
            "did not appear",
        ),
        (
            {
                "command": "str_replace",
                "path": "/home/user/edit.txt",
                "old_str": "same",
                "new_str": "y",
            },
            "lines",
        ),
    ],
)
def test_editor_errors_are_clear_tool_errors(base_sandbox, params, message):
    base_sandbox.call("bash.run", command="printf 'same\\nsame\\n' > /home/user/edit.txt")
    with pytest.raises(ToolError, match=message):
        base_sandbox.call("editor.run", **params)


def test_missing_image_names_the_build_command():
    require_image("base")
    with pytest.raises(SandboxError, match="stateact image build"):
        open_sandbox(SandboxConfig(image="stateact-nothing:v0"))


def test_engine_not_running_is_one_sentence():
    done = stateact(
        "sandbox", "exec", "--", "true", env={"DOCKER_HOST": "unix:///nonexistent.sock"}
    )
    assert done.returncode == 2
    assert "Docker engine is not running" in done.stderr and "Traceback" not in done.stderr


def test_unknown_backend_is_one_sentence():
    done = stateact("sandbox", "exec", "--backend", "vm", "--", "true")
    assert done.returncode == 2 and "unknown sandbox backend" in done.stderr


ORPHAN_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from sandboxes import SandboxConfig, open_sandbox
    sandbox = open_sandbox(SandboxConfig(image="base"))
    print(sandbox.id, flush=True)
    time.sleep(600)
    """
)


def _containers() -> set[str]:
    from sandboxes.docker_backend import LABEL

    return {c.name for c in listed_containers(LABEL)}


def test_killed_owner_leaves_an_orphan_that_the_next_start_reaps():
    require_image("base")
    victim = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    survivor = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        orphan, alive = victim.stdout.readline().strip(), survivor.stdout.readline().strip()
        assert orphan in _containers() and alive in _containers()
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        assert orphan in _containers()  # kill -9 leaves it behind
        started = stateact(
            "sandbox", "exec", "--image", "base", "--", "true"
        )  # the next start reaps
        assert started.returncode == 0, started.stderr
        assert orphan not in _containers()
        assert alive in _containers()  # a parallel run that is still alive is not reaped
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)
    assert alive not in _containers()  # SIGTERM closes the sandbox


def test_the_toolbox_holds_no_root_and_no_capability_after_its_boot(base_sandbox):
    """The container's first process unpacks the toolbox and prepares as root, then becomes
    `user` for good (sandboxes/toolbox/boot.py): no uid or gid of it is root and it holds no
    capability, like the agent's shell; the files it unpacked and the folders it made are root's
    (or the observer's) and closed to the agent."""
    pid = base_sandbox.toolbox.hello["pid"]
    fields = "^(Uid|Gid|CapInh|CapPrm|CapEff|CapAmb):"
    for who in (str(pid), "self"):
        status = base_sandbox.call("bash.run", command=f"grep -E '{fields}' /proc/{who}/status")
        lines = dict(line.split(":", 1) for line in status["output"].splitlines())
        assert lines["Uid"].split() == ["1000"] * 4 and lines["Gid"].split() == ["1000"] * 4
        for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            assert lines[cap].strip() == "0" * 16, (who, cap)
    listing = base_sandbox.call(
        "bash.run",
        command=(
            "stat -c '%n %U %a' /opt/stateact /opt/stateact/toolbox/server.py "
            "/run/stateact-observer /run/stateact-staging; "
            "touch /opt/stateact/toolbox/x.py 2>/dev/null && echo WROTE; "
            "ls /run/stateact-observer 2>&1 | head -1"
        ),
    )["output"]
    assert "/opt/stateact root 755" in listing
    assert "/opt/stateact/toolbox/server.py root 644" in listing
    assert "/run/stateact-observer stateact-observer 700" in listing
    assert "/run/stateact-staging root 711" in listing
    assert "WROTE" not in listing and "Permission denied" in listing


@pytest.mark.docker
def test_a_boot_that_fails_is_one_sentence_and_leaves_no_container(monkeypatch):
    """If the boot process cannot take the toolbox (here: the harness sends none), the sandbox
    does not start: one sentence with the boot's last words, and the container is removed."""
    require_image("base")
    from sandboxes import docker_backend
    from sandboxes.lifecycle import owner_label

    mine = f"stateact.owner={owner_label()}"
    before = {c.id for c in listed_containers(mine)}  # the module's shared sandbox may be there
    monkeypatch.setattr(docker_backend, "_toolbox_tar", lambda: b"")
    with pytest.raises(
        SandboxError, match="toolbox exited; its last words: .*a toolbox of 0 bytes"
    ):
        open_sandbox(SandboxConfig(image="base"))
    assert {c.id for c in listed_containers(mine)} <= before
