"""Probes on a live sandbox run programs only in a frozen, read-only copy of it.

Task-state and AND/OR probes run while the agent's sandbox is live. Probes that only read files
(stat, copy-out) touch nothing; probes that run a program in the sandbox (`shell_command`,
`dom_query`, `url_match`) run in an observer sandbox started from a snapshot, opened on the first
such probe and shared by the rest of the batch, so even a program with a side effect nobody foresaw
cannot change the state being judged. `pgrep` is the exception: processes are not in a snapshot, and
it only reads /proc.
"""

from __future__ import annotations

import dataclasses

from harness.kernel.core import StateActError, ToolError
from sandboxes import open_sandbox

from .probes import ProbeOutcome, ProbeSpec, run_probe

EXECUTING_KINDS = {"shell_command", "dom_query", "url_match"}


class ReadOnlyView:
    """Where each probe of a batch runs: the live sandbox for reads, a snapshot for programs."""

    def __init__(self, live):
        self.live = live
        self._snapshot = None
        self._view = None

    def sandbox_for(self, spec: ProbeSpec):
        if getattr(getattr(self.live, "config", None), "observer", False) or not _executes(spec):
            return self.live  # already a frozen view (the gate's), or a probe that only reads
        if self._view is None:
            try:
                self._snapshot = self.live.snapshot()
                observer = dataclasses.replace(self.live.config, observer=True)
                self._view = open_sandbox(observer, self._snapshot)
            except StateActError as exc:
                self.close()
                raise ToolError(f"could not freeze the sandbox for the probe: {exc}") from None
        return self._view

    def run(self, spec: ProbeSpec) -> ProbeOutcome:
        return run_probe(spec, self.sandbox_for(spec))

    def close(self) -> None:
        view, self._view = self._view, None
        snapshot, self._snapshot = self._snapshot, None
        if view is not None:
            view.close()
        if snapshot is not None:
            self.live.discard_snapshot(snapshot)

    def __enter__(self) -> ReadOnlyView:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _executes(spec: ProbeSpec) -> bool:
    if spec.kind not in EXECUTING_KINDS:
        return False
    argv = getattr(spec, "argv", None) or [""]
    return argv[0].rsplit("/", 1)[-1] != "pgrep"


def run_probe_read_only(spec: ProbeSpec, live) -> ProbeOutcome:
    """One probe against a live sandbox (see the module's docstring)."""
    with ReadOnlyView(live) as view:
        return view.run(spec)
