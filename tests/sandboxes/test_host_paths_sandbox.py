"""Sandbox paths never become host paths outside the sandbox: `..`, agent-made links, special files.

Each test runs on both backends (a real container and real bubblewrap namespaces).
"""

from __future__ import annotations

import os
import stat

import pytest

from sandboxes import SandboxError, open_sandbox


@pytest.fixture(params=["local", "docker"])
def sandbox(request):
    return request.getfixturevalue("local_sandbox" if request.param == "local" else "base_sandbox")


def sh(sandbox, command: str) -> str:
    result = sandbox.call("bash.run", command=command, session="host-paths-test")
    assert result["exit_code"] == 0, result["output"]
    return result["output"]


def test_dotdot_in_a_sandbox_path_stays_inside(sandbox, tmp_path):
    source = tmp_path / "payload.txt"
    source.write_text("payload")
    victim = tmp_path / "victim"
    victim.mkdir()
    climbing = f"/home/user/../../../..{victim}/written.txt"
    try:
        sandbox.copy_in(source, climbing)
    except SandboxError as exc:  # the local backend has no such folder to write to
        assert "\n" not in str(exc)
    assert not (victim / "written.txt").exists()
    assert list(victim.iterdir()) == []
    with pytest.raises(SandboxError, match="absolute"):
        sandbox.copy_in(source, "home/user/relative.txt")
    with pytest.raises(SandboxError, match="NUL"):
        sandbox.copy_out("/home/user/a\x00b", tmp_path / "nul")


def test_copy_in_never_writes_through_an_agent_link(sandbox, tmp_path):
    source = tmp_path / "payload.txt"
    source.write_text("payload")
    victim = tmp_path / "victim"
    victim.mkdir()
    sh(sandbox, f"rm -rf /home/user/out; ln -s {victim} /home/user/out")
    try:
        sandbox.copy_in(source, "/home/user/out/written.txt")
    except SandboxError as exc:  # local: the link is refused; docker: the link dangles inside
        assert "\n" not in str(exc)
    assert list(victim.iterdir()) == []


def test_copy_out_never_follows_an_agent_link(sandbox, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret")
    sh(
        sandbox,
        "rm -rf /home/user/leak /home/user/tree && mkdir -p /home/user/tree && "
        f"ln -s {secret} /home/user/leak && ln -s {secret} /home/user/tree/leak && "
        "echo '#!/bin/sh' > /home/user/tree/run.sh && chmod 755 /home/user/tree/run.sh && "
        "echo data > /home/user/tree/plain.txt",
    )
    target = tmp_path / "out-leak"
    try:
        sandbox.copy_out("/home/user/leak", target)
    except SandboxError as exc:  # local: links are refused
        assert "symbolic link" in str(exc)
    except FileNotFoundError:  # docker: read through the link inside the sandbox, it dangles
        pass
    assert not target.exists() or target.read_text() != "host secret"

    tree = tmp_path / "out-tree"
    sandbox.copy_out("/home/user/tree", tree)
    assert sorted(p.name for p in tree.iterdir()) == ["plain.txt", "run.sh"]
    assert os.stat(tree / "run.sh").st_mode & 0o777 == 0o755  # the executable bit survives
    assert not any(p.is_symlink() for p in tree.rglob("*"))


def test_copy_out_to_a_dotdot_host_name_is_refused(sandbox, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sh(sandbox, "mkdir -p /tmp/tree && echo x > /tmp/tree/x.txt")
    # What a caller gets when it names the host copy after the basename of a path like /tmp/tree/..
    with pytest.raises(SandboxError, match="does not name a file"):
        sandbox.copy_out("/tmp/tree", scratch / "..")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scratch"]


def test_local_snapshot_skips_sockets_and_fifos(local_sandbox):
    sh(
        local_sandbox,
        "mkdir -p /home/user/state && echo kept > /home/user/state/kept.txt && "
        "mkfifo /home/user/state/pipe && "
        'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); '
        "s.bind('/home/user/state/sock')\"",
    )
    snapshot = local_sandbox.snapshot()
    try:
        with open_sandbox(local_sandbox.config, snapshot) as view:
            listing = view.call("bash.run", command="ls /home/user/state")["output"].split()
            kept = view.call("bash.run", command="cat /home/user/state/kept.txt")["output"]
        assert listing == ["kept.txt"] and kept.strip() == "kept"
    finally:
        local_sandbox.discard_snapshot(snapshot)


def test_copy_out_of_a_fifo_or_socket_does_not_hang(local_sandbox, tmp_path):
    sh(local_sandbox, "rm -rf /home/user/odd && mkdir /home/user/odd && mkfifo /home/user/odd/p")
    local_sandbox.copy_out("/home/user/odd", tmp_path / "odd")
    assert list((tmp_path / "odd").iterdir()) == []
    assert stat.S_ISDIR(os.stat(tmp_path / "odd").st_mode)
