"""A one-line live display of a running task (turn, tokens, cost) on a terminal; silent otherwise."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.status import Status


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
