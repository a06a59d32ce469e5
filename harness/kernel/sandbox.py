"""The Sandbox seam as the kernel sees it: a running, isolated machine the tools act on through its
toolbox (the backends in `sandboxes/` implement it), and the snapshots it can be frozen into."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class Sandbox(Protocol):
    """A running, isolated machine with a toolbox inside."""

    id: str
    backend: str

    def call(self, method: str, *, wait_s: float | None = None, **params) -> dict:
        """Call a toolbox method and return its result; raises `ToolError` for its errors."""
        ...

    def exec(self, argv: list[str], timeout: float = 120.0, user: str = "user") -> tuple[int, str]:
        """Run one command outside the persistent sessions; returns (exit code, combined output).

        `user`: `user` (the agent's), `root`, or `observer` (a uid the agent's cannot trace, signal
        or write into, with a home of its own; the same uid on a backend without root)."""
        ...

    def copy_in(self, host_path: Path, sandbox_path: str) -> None: ...

    def copy_out(
        self, sandbox_path: str, host_path: Path, max_bytes: int | None = None
    ) -> None: ...

    def snapshot(self) -> Snapshot:
        """Freeze the current state; `open_sandbox(config, snapshot)` starts an independent
        sandbox from it."""
        ...

    def persist(self, run_dir: Path, name: str) -> Snapshot:
        """Freeze the current state for the run in `run_dir`: unlike `snapshot()` it outlives this
        process (and the orphan reaper) while `run_dir` exists without a result.json."""
        ...

    def discard_snapshot(self, snapshot: Snapshot) -> None:
        """Remove a snapshot this sandbox made (an image or a folder)."""
        ...

    def interactive_argv(self) -> list[str]:
        """A command line that opens an interactive shell in this sandbox."""
        ...

    def close(self) -> None: ...


@dataclass
class Snapshot:
    """A frozen copy of a sandbox's state that new sandboxes can start from. Whether it still
    exists, and removing it, need no running sandbox:
    `sandboxes.snapshot_exists`/`discard_snapshot`."""

    backend: str
    ref: str
    """Docker: an image id; local: a directory on the host holding the sandbox's writable tree."""
    created_at: float
