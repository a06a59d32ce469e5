"""The display belongs to the GUI specialist: in the `stateact` mode the main agent's bash drives
the screen with xdotool and pyautogui (the desktop's env file sourced, DISPLAY set by hand) and
reaches nothing, so the pointer stays put and the open workbook is not touched; with
`--main-display` the same commands move the pointer, type into Calc and save, and are counted as
GUI steps."""

from __future__ import annotations

import openpyxl
import pytest

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes import SandboxConfig
from subagents import Desktop
from tasks.schema import Task
from tests.conftest import require_image
from tests.gates.test_gate_gui_e2e import BOOK, open_book_steps

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

XDOTOOL = (
    ". /tmp/stateact-desktop.env; xdotool mousemove 7 9; xdotool type --delay 30 Zz9; "
    "xdotool key Return; sleep 1; xdotool key ctrl+s; echo xdotool-exit=$?"
)
PYAUTOGUI = "DISPLAY=:1 python3 -c 'import pyautogui; pyautogui.moveTo(11, 13)'; echo py-exit=$?"
BUS = (
    ". /tmp/stateact-desktop.env; dbus-send --session --print-reply --dest=org.freedesktop.DBus "
    "/org/freedesktop/DBus org.freedesktop.DBus.ListNames >/dev/null; echo bus-exit=$?"
)


def the_task(tmp_path) -> Task:
    return Task.model_validate(
        {
            "id": "display-isolation",
            "instruction": f"Put Zz9 into A1 of {BOOK}.",
            "config": open_book_steps(),
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )


def run(tmp_path, main_display: bool) -> tuple[dict, dict]:
    require_image("desktop")
    config = RunConfig(model="script/main", sandbox=SandboxConfig(image="desktop"))
    config.preset = "no-verify"
    config.subagents.enabled = []
    config.main_display = main_display
    steps = [("sleep 4",), (XDOTOOL,), (PYAUTOGUI,), (BUS,), ("sleep 3",)]
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": c}}]} for (c,) in steps]
    turns.append({"tool_calls": [{"name": "finish", "input": {"summary": "done"}}]})
    seen: dict = {}

    def look(sandbox):
        seen["cursor"] = Desktop(sandbox, (1280, 720)).cursor()
        sandbox.copy_out(BOOK, tmp_path / "book.xlsx")
        seen["A1"] = openpyxl.load_workbook(tmp_path / "book.xlsx").active["A1"].value

    result = run_task(
        the_task(tmp_path),
        config,
        tmp_path / "run",
        model=ScriptedModel(turns),
        after_run=look,
    )
    seen["outputs"] = (tmp_path / "run" / "trajectory.jsonl").read_text()
    return result, seen


def test_main_agent_bash_reaches_no_screen(tmp_path):
    result, seen = run(tmp_path, main_display=False)
    assert result["status"] == "completed", result
    assert seen["cursor"] not in ((7, 9), (11, 13))  # the pointer never moved
    assert seen["A1"] == "Name"  # the workbook as the setup made it: nothing typed or saved
    assert "xdotool-exit=1" in seen["outputs"] and "py-exit=1" in seen["outputs"]
    # The session bus is not the screen: gsettings and dconf are program state the agent keeps.
    assert "bus-exit=0" in seen["outputs"]
    assert result["gui_steps"] == 0 and result["options"]["main_display"] is False


def test_with_main_display_the_same_commands_work_and_are_counted(tmp_path):
    result, seen = run(tmp_path, main_display=True)
    assert result["status"] == "completed", result
    assert seen["cursor"] == (11, 13)  # pyautogui moved it last
    assert seen["A1"] == "Zz9"  # typed into Calc and saved through the screen
    assert "xdotool-exit=0" in seen["outputs"] and "py-exit=0" in seen["outputs"]
    assert "bus-exit=0" in seen["outputs"]
    assert result["gui_steps"] == 3  # the xdotool, pyautogui and session-bus calls
    assert result["options"]["main_display"] is True
