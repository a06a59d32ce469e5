"""Issue 23's plumbing without a sandbox: relative step paths, the screen option and the
`--agent-sudo` flag's bad inputs (the live behaviour is in test_osworld_fixes.py)."""

from __future__ import annotations

import json

import pytest

from harness.apps.sandbox_options import parse_screen
from harness.kernel.core import StateActError
from sandboxes.agent_sudo import grant_script, security_options
from sandboxes.base import OSWORLD_SCREEN, SandboxConfig
from tasks.schema import SetupStep, load_task
from tasks.setup import run_setup, sandbox_target
from tests.conftest import stateact
from tests.tasks.test_task_setup import RecordingSandbox


def test_a_relative_step_path_is_in_the_home_as_osworlds_server_resolves_it():
    assert sandbox_target("eval.sh") == "/home/user/eval.sh"
    assert sandbox_target("Downloads/x.pptx") == "/home/user/Downloads/x.pptx"
    assert sandbox_target("~/a/../b.txt") == "/home/user/b.txt"
    assert sandbox_target("$HOME/c") == "/home/user/c"
    assert sandbox_target("/tmp/x") == "/tmp/x"
    # Normalised, so it names a path inside the sandbox (a `..` past the root stops at /).
    assert sandbox_target("../../../../etc/x") == "/etc/x"
    assert sandbox_target("//tmp//y") == "/tmp/y"


def test_a_relative_download_lands_in_the_home(tmp_path):
    (tmp_path / "eval.sh").write_text("echo ok\n")
    task_path = tmp_path / "t.json"
    task_path.write_text(json.dumps({"id": "t", "instruction": "x"}))
    sandbox = RecordingSandbox()
    step = {"type": "download", "parameters": {"files": [{"url": "eval.sh", "path": "eval.sh"}]}}
    run_setup([SetupStep.model_validate(step)], sandbox, load_task(task_path), None)
    assert sandbox.copied == [("echo ok\n", "/home/user/eval.sh")]


def test_the_setup_screen_is_the_sandboxes_and_osworlds_by_default(tmp_path):
    task_path = tmp_path / "t.json"
    task_path.write_text(json.dumps({"id": "t", "instruction": "x"}))
    step = SetupStep.model_validate(
        {"type": "execute", "parameters": {"command": "echo {SCREEN_WIDTH}x{SCREEN_HEIGHT}"}}
    )
    for size in (None, (1280, 800)):
        sandbox = RecordingSandbox()
        if size:
            sandbox.config = SandboxConfig(display_size=size)
        run_setup([step], sandbox, load_task(task_path), None)
        width, height = size or OSWORLD_SCREEN
        scripts = [" ".join(argv) for argv, _ in sandbox.commands]
        assert any(f"stateact-desktop start {width}x{height}" in s for s in scripts)
        assert any(f"echo {width}x{height}" in s for s in scripts)


def test_screen_sizes_are_checked():
    assert parse_screen("1920x1080") == (1920, 1080)
    assert parse_screen(" 1280X720 ") == (1280, 720)
    for bad in ("1920", "1920x", "0x0", "99999x1080", "1920x1080x24", "-1x5"):
        with pytest.raises(StateActError, match="--screen must look like 1920x1080"):
            parse_screen(bad)


def test_agent_sudo_is_off_by_default_and_only_then_keeps_no_new_privileges():
    assert SandboxConfig().agent_sudo is False
    assert security_options(False) == ["no-new-privileges"]
    assert security_options(True) == []
    script = grant_script()
    assert "user:password" in script and "visudo -cqf" in script


def test_bad_screen_and_sudo_without_docker_are_one_sentence(tmp_path):
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"id": "t", "instruction": "x"}))
    out = tmp_path / "out"
    done = stateact("run", str(task), "--model", "script/x", "--screen", "big", "--out", str(out))
    assert done.returncode == 2 and "--screen must look like 1920x1080" in done.stderr
    assert "Traceback" not in done.stderr
    done = stateact("run", str(task), "--model", "script/x", "--sandbox", "local", "--agent-sudo")
    assert done.returncode == 2 and "--agent-sudo needs the docker backend" in done.stderr
    helped = stateact("suite", "--help")
    assert "--agent-sudo" in helped.stdout and "--screen" in helped.stdout
