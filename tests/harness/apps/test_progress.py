"""Suite and batch progress: plain lines with the count, running cost and ETA when not on a
terminal; a rich bar with ETA on one; model-written names never reach the terminal raw."""

from __future__ import annotations

import io

from rich.console import Console

from harness.cli.progress import RunsProgress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_count_cost_and_eta(capsys):
    clock = Clock()
    with RunsProgress("suite", 4, enabled=False, clock=clock) as progress:
        clock.now += 60
        first = progress.advance("lh-calc-001", "completed", True, 0.25, " score 1.000")
        clock.now += 60
        second = progress.advance("lh-os-002", "gate_rejected", False, "0.5")
        third = progress.advance("\x1b[2Jbad", "error", False, None)
    assert first == "[1/4] lh-calc-001: completed score 1.000 · 1 succeeded · $0.2500 · ETA 3m00s"
    assert second.endswith("1 succeeded · $0.7500 · ETA 2m00s")
    assert "\x1b" not in third and "\\x1b" in third and third.endswith("ETA 0m40s")
    assert capsys.readouterr().err.splitlines() == [first, second, third]


def test_bar_on_a_terminal_shows_eta_and_cost():
    console = Console(file=io.StringIO(), force_terminal=True, width=160)
    progress = RunsProgress("batch", 3, enabled=True, console=console)
    with progress:
        assert progress.advance("a.xlsx", "completed", True, 0.1) == ""
    output = console.file.getvalue()
    assert "1/3" in output and "$0.1000" in output and "ETA" in output
