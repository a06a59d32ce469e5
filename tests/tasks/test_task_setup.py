"""run_setup's step plumbing, seen through the commands it sends to a recording sandbox."""

from __future__ import annotations

import json
import subprocess

import pytest

from harness.kernel.core import StateActError
from tasks.cache import cache_name
from tasks.schema import SetupStep, load_task
from tasks.setup import (
    default_placeholders,
    run_setup,
    window_activate_script,
    window_close_script,
)
from tasks.setup_windows import new_window_script, opens_a_window, titled_window_script


class RecordingSandbox:
    """Answers every command with exit 0 (or `fail_on` → 1) and records commands and copies."""

    def __init__(self, fail_on: str | None = None):
        self.commands: list[tuple[list[str], str]] = []
        self.copied: list[tuple[str, str]] = []
        self.calls: list[str] = []
        self.fail_on = fail_on

    def call(self, method, *, wait_s=None, **params):
        self.calls.append(method)
        return {"seconds": 0.0}

    def exec(self, argv, timeout=120.0, user="user"):
        self.commands.append((argv, user))
        text = " ".join(argv)
        if "test -f /tmp/stateact-desktop.env" in text:
            return 1, ""
        return (1, "boom") if self.fail_on and self.fail_on in text else (0, "hello\n")

    def copy_in(self, host_path, sandbox_path):
        self.copied.append((host_path.read_text(), sandbox_path))


def steps(*raw):
    return [SetupStep.model_validate(s) for s in raw]


def test_steps_become_sandbox_commands(tmp_path):
    url = "https://files.example.org/in.xlsx"
    (tmp_path / cache_name(url)).write_text("payload")
    task_file = tmp_path / "t.json"
    task_file.write_text(
        json.dumps({"id": "t", "instruction": "x", "evaluator": {"func": "infeasible"}})
    )
    task = load_task(task_file)
    sandbox = RecordingSandbox()
    outputs = tmp_path / "outputs"
    run_setup(
        steps(
            {
                "type": "download",
                "parameters": {"files": [{"url": url, "path": "/home/user/Desktop/in.xlsx"}]},
            },
            {"type": "open", "parameters": {"path": "/home/user/Desktop/in.xlsx"}},
            {
                "type": "launch",
                "parameters": {"command": ["xdotool", "mousemove", "{SCREEN_WIDTH_HALF}", "0"]},
            },
            {
                "type": "execute",
                "parameters": {
                    "command": "echo {CLIENT_PASSWORD}",
                    "shell": True,
                    "stdout": "echo.out",
                },
            },
            {
                "type": "activate_window",
                "parameters": {"window_name": "in.xlsx - LibreOffice Calc", "strict": True},
            },
            {"type": "sleep", "parameters": {"seconds": 0}},
        ),
        sandbox,
        task,
        tmp_path,
        default_placeholders(1280, 720, "pw"),
        outputs_dir=outputs,
    )
    assert sandbox.copied == [("payload", "/home/user/Desktop/in.xlsx")]
    scripts = [argv[-1] for argv, _ in sandbox.commands]
    # The backend writes a download as the user: no root step touches the path afterwards.
    assert not any(argv[0] == "chown" for argv, _ in sandbox.commands)
    assert sum("stateact-desktop start 1280x720" in s for s in scripts) == 1
    assert any(
        "setsid nohup bash -c 'soffice --calc /home/user/Desktop/in.xlsx'" in s for s in scripts
    )
    assert any("xdotool mousemove 640 0" in s for s in scripts)
    # The workbook's window came named after it, then the screen was let settle (only after the
    # open step: xdotool opens no window).
    assert any("--name 'in\\.xlsx'" in s for s in scripts)
    assert sandbox.calls == ["desktop.wait_quiet"]
    assert any(s.endswith("echo pw") for s in scripts)
    assert (outputs / "echo.out").read_text() == "hello\n"
    assert any("windowactivate" in s for s in scripts)


def test_a_failing_step_is_named(tmp_path):
    task_file = tmp_path / "t.json"
    task_file.write_text(json.dumps({"instruction": "x", "evaluator": {"func": "infeasible"}}))
    task = load_task(task_file)
    # A command's own exit code does not fail the step (OSWorld runs `diff` and keeps its output).
    run_setup(
        steps({"type": "execute", "parameters": {"command": ["false-cmd"]}}),
        RecordingSandbox(fail_on="false-cmd"),
        task,
        None,
    )
    with pytest.raises(StateActError, match=r"setup step 1 \(close_window\) failed: .*boom"):
        run_setup(
            steps(
                {"type": "sleep", "parameters": {"seconds": 0}},
                {"type": "close_window", "parameters": {"window_name": "Nope"}},
            ),
            RecordingSandbox(fail_on="Nope"),
            task,
            None,
        )
    # OSWorld ignores wmctrl's answer when it activates a window: a missing one is only a warning.
    run_setup(
        steps({"type": "activate_window", "parameters": {"window_name": "Nope"}}),
        RecordingSandbox(fail_on="Nope"),
        task,
        None,
    )
    with pytest.raises(
        StateActError, match=r"setup step 0 \(download\) failed: .*not in any cache dir"
    ):
        run_setup(
            steps(
                {
                    "type": "download",
                    "parameters": {
                        "files": [{"url": "https://x/y.txt", "path": "/home/user/y.txt"}]
                    },
                }
            ),
            RecordingSandbox(),
            task,
            None,
        )
    with pytest.raises(StateActError, match=r"setup step 0 has the unsupported type 'teleport'"):
        run_setup(steps({"type": "teleport", "parameters": {}}), RecordingSandbox(), task, None)
    with pytest.raises(
        StateActError, match=r"setup step 0 \(open\) failed: missing parameter 'path'"
    ):
        run_setup(steps({"type": "open", "parameters": {}}), RecordingSandbox(), task, None)


def test_command_steps_run_in_the_desktop_session_when_the_image_has_one(tmp_path):
    task_file = tmp_path / "t.json"
    task_file.write_text(json.dumps({"instruction": "x", "evaluator": {"func": "infeasible"}}))
    gsettings = steps(
        {"type": "execute", "parameters": {"command": "gsettings set a b false"}},
        {"type": "command", "parameters": {"command": ["python", "-c", "import pyautogui"]}},
    )
    desktop = RecordingSandbox()
    run_setup(gsettings, desktop, load_task(task_file), None, before_agent=True)
    scripts = [argv[-1] for argv, _ in desktop.commands]
    starts = [s for s in scripts if "stateact-desktop start" in s]
    assert len(starts) == 1 and "mkdir -p /home/user/Desktop" in starts[0]
    assert scripts.index(starts[0]) < next(i for i, s in enumerate(scripts) if "gsettings" in s)
    # The session bus is also published where Ubuntu keeps it (root makes the user's /run folder).
    assert any(u == "root" and "/run/user/1000" in argv[-1] for argv, u in desktop.commands)
    assert any("ln -sfn" in s and "/run/user/1000/bus" in s for s in scripts)
    # After the agent (postconfig) the user folders are not made again: it may have removed one.
    late = RecordingSandbox()
    run_setup(gsettings, late, load_task(task_file), None)
    assert not any("mkdir -p /home/user/Desktop" in argv[-1] for argv, _ in late.commands)
    assert not any(user == "root" for _, user in late.commands)
    # An image without the desktop (base): the commands run without one, asked once.
    bare = RecordingSandbox(fail_on="command -v stateact-desktop")
    run_setup(gsettings, bare, load_task(task_file), None)
    scripts = [argv[-1] for argv, _ in bare.commands]
    assert not any("stateact-desktop start" in s for s in scripts)
    assert sum("command -v stateact-desktop" in s for s in scripts) == 1


def test_window_steps_wait_and_find_the_image_stand_ins():
    script = window_activate_script("Google Chrome", strict=False, by_class=False)
    assert "SECONDS + 30" in script and "--name Chromium" in script
    assert "--class Terminal" in window_activate_script("Terminal", strict=False, by_class=False)
    strict = window_close_script("New Tab - Google Chrome", strict=True, by_class=False)
    assert "'^New Tab - Chromium$'" in strict


def test_a_launched_application_is_waited_for_until_a_new_window_shows(tmp_path):
    assert opens_a_window("libreoffice") and opens_a_window("/usr/bin/gimp")
    assert not opens_a_window("socat") and not opens_a_window(None)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "xdotool").write_text("#!/bin/sh\nprintf '11\\n22\\n33\\n'\n")
    (fake / "xdotool").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}

    def wait(before: str) -> int:
        script = new_window_script(before, wait_s=1)
        return subprocess.run(["bash", "-c", script], env=env, timeout=10).returncode

    assert wait("11\n22\n") == 0  # 33 is new
    assert wait("11\n22\n33\n") == 1  # nothing new within the wait


def test_an_office_document_is_waited_for_until_a_window_bears_its_name(tmp_path):
    """LibreOffice's first window is a blank frame; the document has loaded when a window is
    named after it. The name is matched literally (regex characters escaped) and quoted."""
    fake = tmp_path / "bin"
    fake.mkdir()
    # A fake xdotool that finds a window only for the literal title it was given.
    (fake / "xdotool").write_text(
        '#!/bin/sh\nfor last; do :; done\n[ "$last" = "q3 \\(final\\)\\.xlsx" ] && echo 44\n'
    )
    (fake / "xdotool").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}

    def wait(name: str) -> int:
        script = titled_window_script(name, wait_s=1)
        return subprocess.run(["bash", "-c", script], env=env, timeout=10).returncode

    assert wait("q3 (final).xlsx") == 0
    assert wait("other.xlsx") == 1
