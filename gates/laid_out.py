"""The finish gate on a laid-out state: what `stateact gate` and the gate benchmark run.

A task's setup runs in a fresh sandbox; the files under a host folder are laid over the machine's
`/` as the agent's work (ROOT/home/user/x becomes /home/user/x, counted as changed during the run);
an optional command then runs as the sandbox's user (for example: open a document in its
application and edit it without saving); then the gate judges the state exactly as at the end of a
run and returns its `Verdict`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.kernel.core import Model, StateActError
from sandboxes import open_sandbox
from tasks.setup import run_setup

from .gate import Gate
from .verdict import Verdict

THEN_TIMEOUT_S = 180.0
DESKTOP_ENV = "/tmp/stateact-desktop.env"


@dataclass
class ThenReport:
    """How the command after the layout went (a failure is reported, not fatal)."""

    command: str
    exit_code: int
    output: str

    @property
    def failed(self) -> bool:
        return self.exit_code != 0

    def to_json(self) -> dict:
        return {"command": self.command, "exit_code": self.exit_code, "output": self.output[-2000:]}


@dataclass
class GateRun:
    """A verdict and what led to it."""

    verdict: Verdict
    laid: list[str] = field(default_factory=list)
    then: ThenReport | None = None

    def to_json(self, evidence: bool = False) -> dict:
        data = self.verdict.to_json(evidence=evidence)
        data["laid_out"] = self.laid
        if self.then is not None:
            data["then"] = self.then.to_json()
        return data


def files_under(root: Path) -> list[tuple[Path, str]]:
    """(host file, sandbox path) for every regular file under `root`; refuses symbolic links, which
    could point anywhere on the host."""
    root = Path(root)
    if not root.is_dir():
        raise StateActError(f"--root {root} is not a folder")
    found = []
    for directory, dirs, files in os.walk(root):
        for name in sorted([*dirs, *files]):
            host = Path(directory) / name
            if host.is_symlink():
                raise StateActError(
                    f"{host} is a symbolic link; lay out regular files and folders only"
                )
        for name in sorted(files):
            host = Path(directory) / name
            sandbox_path = "/" + host.relative_to(root).as_posix()
            found.append((host, sandbox_path))
    return found


def lay_out(sandbox, files: list[tuple[Path, str]]) -> list[str]:
    """Copy the files in and stamp them now, so the gate counts them as changed during the run."""
    for host, sandbox_path in files:
        sandbox.copy_in(host, sandbox_path)
    paths = [path for _, path in files]
    for start in range(0, len(paths), 200):
        code, output = sandbox.exec(["touch", "-c", "--", *paths[start : start + 200]])
        if code != 0:
            raise StateActError(f"could not stamp the laid-out files: {output.strip()[-300:]}")
    return paths


def run_then(sandbox, command: str, timeout: float = THEN_TIMEOUT_S) -> ThenReport:
    """Run `command` with bash as the sandbox's user, on the desktop when the image has one."""
    prelude = (
        "if command -v stateact-desktop >/dev/null; then stateact-desktop start >/dev/null "
        f"&& . {DESKTOP_ENV}; fi; cd /home/user; "
    )
    code, output = sandbox.exec(["bash", "-c", prelude + command], timeout=timeout)
    return ThenReport(command, code, output)


def gate_laid_out(
    task,
    root: Path,
    model: Model | None,
    sandbox_config,
    *,
    then: str | None = None,
    cache_dir: Path | None = None,
    max_turns: int = 30,
) -> GateRun:
    """Setup, layout, command, gate; the sandbox is always closed."""

    files = files_under(root)
    with open_sandbox(sandbox_config) as sandbox:
        run_setup(task.config, sandbox, task, cache_dir, before_agent=True)
        started_at = time.time()
        present = Gate.present(sandbox, task.instruction)
        laid = lay_out(sandbox, files)
        report = run_then(sandbox, then) if then else None
        gate = Gate(
            task.instruction,
            sandbox,
            model,
            started_at=started_at,
            initially_present=present,
            max_turns=max_turns,
        )
        return GateRun(gate.judge(), laid, report)
