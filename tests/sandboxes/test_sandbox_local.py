"""The bubblewrap backend for real: same interface as docker, no daemon."""

from __future__ import annotations

import pytest

from harness.kernel.core import ToolError
from sandboxes import SandboxError, open_sandbox


def test_runs_as_user_offline_with_host_python(local_sandbox):
    code, output = local_sandbox.exec(["bash", "-lc", "id -un; echo $HOME; cat /proc/net/dev"])
    assert code == 0
    lines = output.split()
    assert lines[:2] == ["user", "/home/user"]
    interfaces = [line.split(":")[0].strip() for line in output.splitlines() if ":" in line]
    assert interfaces == ["lo"]
    code, _ = local_sandbox.exec(["python3", "-c", "import openpyxl, docx, pptx, lxml"])
    assert code == 0
    assert local_sandbox.exec(["false"])[0] == 1


def test_sessions_persist_and_time_out(local_sandbox):
    local_sandbox.call("bash.run", command="cd /tmp && export X=7")
    result = local_sandbox.call("bash.run", command="echo $X $PWD")
    assert result["output"].split() == ["7", "/tmp"] and result["cwd"] == "/tmp"
    partial = local_sandbox.call("bash.run", command="echo begin; sleep 5", timeout=1)
    assert partial["timed_out"] and "begin" in partial["output"]
    assert local_sandbox.call("bash.run", command="echo ok")["output"].strip() == "ok"
    local_sandbox.call("python.run", code="value = [1, 2, 3]")
    assert local_sandbox.call("python.run", code="sum(value)")["output"].strip() == "6"


def test_copy_snapshot_and_limits(local_sandbox, tmp_path):
    source = tmp_path / "a.txt"
    source.write_text("hello")
    local_sandbox.copy_in(source, "/home/user/docs/a.txt")
    assert local_sandbox.call("bash.run", command="cat docs/a.txt")["output"].strip() == "hello"
    local_sandbox.copy_out("/home/user/docs/a.txt", tmp_path / "b.txt")
    assert (tmp_path / "b.txt").read_text() == "hello"
    with pytest.raises(SandboxError, match="only copy files under"):
        local_sandbox.copy_in(source, "/etc/a.txt")
    with pytest.raises(FileNotFoundError):
        local_sandbox.copy_out("/home/user/none.txt", tmp_path / "none.txt")

    snapshot = local_sandbox.snapshot()
    try:
        with open_sandbox(local_sandbox.config, snapshot) as view:
            view.call("bash.run", command="rm -r /home/user/docs")
        assert local_sandbox.call("file.stat", path="/home/user/docs/a.txt")["exists"]
    finally:
        local_sandbox.discard_snapshot(snapshot)


def test_editor_errors(local_sandbox):
    with pytest.raises(ToolError, match="absolute"):
        local_sandbox.call("editor.run", command="view", path="x.txt")


def test_closing_removes_the_host_folder(local_sandbox):
    from sandboxes import SandboxConfig

    sandbox = open_sandbox(SandboxConfig(backend="local"))
    root = sandbox.root
    assert root.exists()
    sandbox.close()
    assert not root.exists()


def test_run_owned_snapshots_are_orphans_once_the_run_is_gone_or_finished(tmp_path):
    from sandboxes.lifecycle import owner_is_gone

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert not owner_is_gone(f"run:{run_dir}")  # resumable: keep its milestone
    (run_dir / "result.json").write_text("{}")
    assert owner_is_gone(f"run:{run_dir}")  # finished: nothing will resume it
    assert owner_is_gone(f"run:{tmp_path / 'deleted'}")
