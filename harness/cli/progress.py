"""Live displays: one running task (turn, tokens, cost) and many runs (a suite's or a batch's)."""

from __future__ import annotations

import sys
import threading
import time

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.status import Status

from harness.kernel.display import visible


class TurnProgress:
    def __init__(self, label: str):
        self.label = label
        self.console = Console(stderr=True)
        self.status: Status | None = None

    def __enter__(self) -> TurnProgress:
        if sys.stderr.isatty():
            self.status = self.console.status(f"{self.label}: starting the sandbox")
            self.status.start()
        return self

    def update(self, stats) -> None:
        if self.status is None:
            return
        usage = stats.usage
        self.status.update(
            f"{self.label}: turn {stats.main_turns} (all agents {stats.model_turns}) · "
            f"{usage.prompt_tokens:,} in / {usage.output_tokens:,} out · ${usage.cost_usd:.4f} · "
            f"{stats.elapsed_s:.0f} s"
        )

    def __exit__(self, *exc_info) -> None:
        if self.status is not None:
            self.status.stop()


def _eta_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class RunsProgress:
    """Progress over many runs (a suite's tasks, a batch's files): done/total, ETA, running cost.

    A rich bar on a terminal; one plain line per finished run otherwise (logs, CI). `advance` is
    called from worker threads, so it only adds under a lock.
    """

    def __init__(
        self,
        label: str,
        total: int,
        enabled: bool | None = None,
        clock=time.monotonic,
        console: Console | None = None,
    ):
        self.label = label
        self.total = total
        self.clock = clock
        self.started = clock()
        self.done = self.succeeded = 0
        self.cost = 0.0
        self.lock = threading.Lock()
        self.console = console or Console(stderr=True)
        self.bar: Progress | None = None
        if sys.stderr.isatty() if enabled is None else enabled:
            self.bar = Progress(
                TextColumn(escape(label)),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.task = self.bar.add_task("", total=total)

    def __enter__(self) -> RunsProgress:
        self.started = self.clock()
        if self.bar:
            self.bar.start()
        return self

    def eta_s(self) -> float | None:
        """Seconds left at the mean pace so far; None before the first run finishes."""
        if not self.done:
            return None
        return (self.clock() - self.started) / self.done * max(0, self.total - self.done)

    def advance(self, name: str, status: str, succeeded: bool, cost_usd, detail: str = "") -> str:
        """Count one finished run; returns the plain line (printed when there is no bar)."""
        try:
            cost = float(cost_usd or 0.0)
        except (TypeError, ValueError):
            cost = 0.0
        with self.lock:
            self.done += 1
            self.succeeded += bool(succeeded)
            self.cost += cost
            figures = f"{self.succeeded} succeeded · ${self.cost:.4f}"
            last = visible(f"{name}: {status}")
            if self.bar:
                description = f"{figures} · last {escape(last)}"
                self.bar.update(self.task, advance=1, description=description)
                return ""
            line = visible(
                f"[{self.done}/{self.total}] {name}: {status}{detail} · {figures} · ETA "
                f"{_eta_text(self.eta_s())}"
            )
            print(line, file=sys.stderr, flush=True)
            return line

    def __exit__(self, *exc_info) -> None:
        if self.bar is not None:
            self.bar.stop()
