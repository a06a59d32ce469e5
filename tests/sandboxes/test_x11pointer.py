"""Which xdotool commands the desktop driver sends itself through XTEST (sandboxes/toolbox/drivers/
x11pointer.py), and what it sends for them; everything else stays xdotool's. The real display is
exercised by the GUI tests (test_toolbox_drivers.py, tests/subagents)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

POINTER = Path(__file__).resolve().parents[2] / "sandboxes/toolbox/drivers/x11pointer.py"
spec = importlib.util.spec_from_file_location("x11pointer_under_test", POINTER)
x11pointer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(x11pointer)


@pytest.mark.parametrize(
    ("command", "plan"),
    [
        (["mousemove", "--sync", "10", "20"], [("move", 10, 20)]),
        (["mousemove", "0", "1079"], [("move", 0, 1079)]),
        (["click", "1"], [("button", 1, 1, 0), ("button", 1, 0, 0)]),
        (
            ["click", "--repeat", "2", "--delay", "10", "1"],
            [("button", 1, 1, 0), ("button", 1, 0, 0), ("button", 1, 1, 10), ("button", 1, 0, 0)],
        ),
        (["click", "5"], [("button", 5, 1, 0), ("button", 5, 0, 0)]),
    ],
)
def test_plain_moves_and_clicks_are_sent_in_process(command, plan):
    assert (x11pointer._move(command) or x11pointer._click(command)) == plan


@pytest.mark.parametrize(
    "command",
    [
        ["mousemove", "--window", "123", "10", "20"],  # relative to a window: xdotool's
        ["mousemove_relative", "5", "5"],
        ["mousemove", "--sync", "-5", "20"],
        ["mousemove", "10"],
        ["click", "--window", "1", "1"],
        ["click", "--clearmodifiers", "1"],
        ["click", "0"],
        ["click", "--repeat", "x", "1"],
        ["click"],
        ["key", "ctrl+s"],
        ["type", "--delay", "12", "--", "hello"],
    ],
)
def test_anything_else_is_left_to_xdotool(command):
    assert x11pointer._move(command) is None and x11pointer._click(command) is None
