"""The desktop driver's settle wait after an action, on a scripted screen (no X server): what it
waits for and what it no longer waits for. The real screen is tested in test_subagents_desktop.py
and the GUI end-to-end tests; the time it saves is measured by `make bench`."""

from __future__ import annotations

import importlib.util
import io
import time
from pathlib import Path

import pytest
from PIL import Image

DESKTOP_DRIVER = Path(__file__).resolve().parents[2] / "sandboxes/toolbox/drivers/desktop.py"


class ScriptedScreen:
    """A 1x1 screen whose colour an action sets at once (`draw` command) or after a delay
    (`later` command: seconds and a colour), with a DAMAGE-like report of drawing."""

    def __init__(self):
        self.colour = 0
        self.pending: list[tuple[float, int]] = []
        self.reported = 0
        self.grabs = 0

    def run(self, command: list[str]) -> str:
        if command[0] == "draw":
            self.colour = int(command[1])
        elif command[0] == "later":
            self.pending.append((time.monotonic() + float(command[1]), int(command[2])))
        return ""

    def _update(self) -> None:
        now = time.monotonic()
        for due, colour in sorted(self.pending):
            if due <= now:
                self.colour = colour
        self.pending = [(due, colour) for due, colour in self.pending if due > now]

    def grab(self) -> Image.Image:
        self._update()
        self.grabs += 1
        return Image.new("RGB", (1, 1), (self.colour, 0, 0))

    def drawn(self) -> bool:
        self._update()
        seen, self.reported = self.colour != self.reported, self.colour
        return seen

    def wait(self, timeout_s: float) -> None:
        """As the X connection's select: back at the next drawing or when the time is up."""
        due = min((due for due, _ in self.pending), default=None)
        until = (
            time.monotonic() + timeout_s if due is None else min(due, time.monotonic() + timeout_s)
        )
        time.sleep(max(0.0, until - time.monotonic()))


@pytest.fixture
def driver(monkeypatch):
    monkeypatch.syspath_prepend(str(DESKTOP_DRIVER.parent))  # its helper modules, as the runner
    spec = importlib.util.spec_from_file_location("desktop_driver_under_test", DESKTOP_DRIVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    screen = ScriptedScreen()
    monkeypatch.setattr(module, "_ensure_environment", lambda: None)
    monkeypatch.setattr(module, "_damage_watch", lambda: screen)
    monkeypatch.setattr(module, "_pointer", lambda: None)  # no X server: every command scripted
    monkeypatch.setattr(module, "_grab", screen.grab)
    monkeypatch.setattr(module, "_xdotool", screen.run)
    module.screen = screen
    return module


def shown(driver, commands: list[list[str]]) -> int:
    png = driver.act(commands, 1, 1, settle_s=2.0)["png"]
    return Image.open(io.BytesIO(png)).getpixel((0, 0))[0]


def test_drawing_that_goes_on_after_the_commands_is_waited_for(driver):
    assert shown(driver, [["draw", "10"], ["later", "0.05", "20"]]) == 20


def test_an_action_that_draws_only_after_its_commands_is_waited_for(driver):
    # A menu opens about 0.2 s after its key: within the response window.
    assert shown(driver, [["later", "0.18", "30"]]) == 30


def test_a_quiet_spell_after_the_action_drew_ends_the_wait(driver):
    # Drawn while the commands ran, then quiet: drawing 0.4 s later belongs to the next look.
    assert shown(driver, [["draw", "40"], ["later", "0.4", "50"]]) == 40


def test_an_action_that_draws_nothing_costs_one_grab(driver):
    assert shown(driver, [["noop"]]) == 0
    assert driver.screen.grabs == 1  # the quiet screen is confirmed by DAMAGE, not by grabs


def test_no_settle_wait_takes_the_screen_at_once(driver):
    png = driver.act([["later", "0.05", "60"]], 1, 1, settle_s=0.0)["png"]
    assert Image.open(io.BytesIO(png)).getpixel((0, 0))[0] == 0


def test_a_screen_that_keeps_drawing_is_taken_at_the_cap_with_one_grab(driver):
    """A blinking cursor never lets the screen settle: the wait ends at its cap, and the frames
    drawn meanwhile cost no grab (the reports say something changed; only the last look grabs)."""
    script = [["later", f"{0.05 * n:.2f}", str(n)] for n in range(1, 40)]
    began = time.monotonic()
    png = driver.act(script, 1, 1, settle_s=0.5)["png"]
    took = time.monotonic() - began
    assert 0.45 <= took < 1.0
    assert Image.open(io.BytesIO(png)).getpixel((0, 0))[0] >= 9  # drawn by then, not the first
    assert driver.screen.grabs == 1
