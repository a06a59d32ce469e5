"""StateAct as a coding-agent backend: a repository and an instruction in, a gate-checked patch out.

The repository is copied into a sandbox (owned by `user`, at /home/user/<name>), the main agent
works on it under the finish gate, and the tree is copied back out once the run ends. The patch
is computed on the host against the untouched original, so the user's repository changes only
with `apply`.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.kernel.core import Model, StateActError
from harness.kernel.records import safe_run_name, write_json_atomic
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes.base import SANDBOX_HOME
from tasks.schema import Evaluator, SetupStep, Task

from .apply import ApplyPlan

IGNORED_NAMES = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
UPLOAD_NAME = ".stateact-upload.tar"
PATCH_NAME = "changes.patch"
SUMMARY_NAME = "summary.json"


@dataclass
class CodeSummary:
    """What `stateact code` reports (summary.json, and `--json` on stdout)."""

    repo: str
    """The repository on the host."""
    sandbox_path: str
    """Where the repository lived inside the sandbox."""
    status: str
    """The run's status (completed, gate_rejected, turn_limit, ...)."""
    gate_passed: bool
    """True only when the finish gate accepted the final state."""
    gate_rounds: int
    """Finish-gate rounds the run took."""
    cost_usd: float
    """What the run's model calls cost."""
    patch: str | None
    """Path of the patch file, or None when nothing changed (or nothing came back)."""
    added: list[str] = field(default_factory=list)
    """Files the agent created, relative to the repository."""
    modified: list[str] = field(default_factory=list)
    """Files the agent changed."""
    deleted: list[str] = field(default_factory=list)
    """Files the agent removed."""
    applied: bool = False
    """Whether the change was written to the host repository."""
    run_dir: str = ""
    """The run directory (config, trajectory, gate rounds, result, patch)."""
    error: str | None = None
    """Why the run did not complete, if it did not."""


def sandbox_name(repo: Path) -> str:
    """A shell-safe folder name for the repository inside the sandbox."""
    return safe_run_name(repo.resolve().name, fallback="repo")


def code_instruction(instruction: str, sandbox_path: str) -> str:
    """The instruction the agent and the gate get: the user's words plus where the code is.

    The note is a fact about the machine, not a claim about the work, so the gate stays
    narration-blind.
    """
    return (
        f"{instruction.strip()}\n\nThe repository is at {sandbox_path}; if it has tests, run them."
    )


@dataclass(frozen=True)
class CodeOptions:
    """How `run_code` runs, beyond the repository, instruction, config and run folder."""

    apply: bool = False
    """Write a change the gate accepted into the host repository."""
    model: Model | None = None
    """The agent's model (None: from the config's spec)."""
    gate_model: Model | None = None
    """The gate's model (None: from the config)."""
    on_turn: Callable | None = None
    """Called with the run's counters after every model turn (progress)."""


def run_code(
    repo: str | Path,
    instruction: str,
    config: RunConfig,
    out_dir: str | Path,
    options: CodeOptions | None = None,
) -> CodeSummary:
    """Run `instruction` on a copy of `repo`; write the run dir, `changes.patch` and
    `summary.json`."""
    options = options or CodeOptions()
    repo = Path(repo).expanduser()
    if not repo.is_dir():
        raise StateActError(f"the repository path {repo} does not exist or is not a folder.")
    if not instruction.strip():
        raise StateActError("the instruction is empty; say what to change in the repository.")
    repo = repo.resolve()
    out_dir = Path(out_dir)
    sandbox_path = f"{SANDBOX_HOME}/{sandbox_name(repo)}"
    with tempfile.TemporaryDirectory(prefix="stateact-code-") as scratch:
        scratch = Path(scratch)
        upload = scratch / UPLOAD_NAME
        _pack(repo, upload, sandbox_name(repo))
        task = _code_task(repo, code_instruction(instruction, sandbox_path), sandbox_path, scratch)
        returned = scratch / "returned"

        def copy_back(sandbox) -> None:
            try:
                sandbox.copy_out(sandbox_path, returned)
            except FileNotFoundError:
                raise StateActError(
                    f"the agent removed {sandbox_path}; there is nothing to diff."
                ) from None

        result = run_task(
            task,
            config,
            out_dir,
            model=options.model,
            gate_model=options.gate_model,
            on_turn=options.on_turn,
            after_run=copy_back,
        )
        summary = CodeSummary(
            repo=str(repo),
            sandbox_path=sandbox_path,
            status=result["status"],
            gate_passed=result.get("gate_passed") is True,
            gate_rounds=result.get("gate_rounds", 0),
            cost_usd=result.get("cost_usd", 0.0),
            patch=None,
            run_dir=str(out_dir),
            error=result.get("error"),
        )
        if returned.is_dir():
            _record_changes(repo, returned, out_dir, summary, scratch)
            if options.apply:
                _apply_accepted(repo, returned, summary)
    write_json_atomic(out_dir / SUMMARY_NAME, asdict(summary))
    return summary


def _code_task(repo: Path, instruction: str, sandbox_path: str, scratch: Path) -> Task:
    """The task: the packed repository copied in and unpacked, no checker (the gate judges)."""
    return Task(
        id=f"code-{sandbox_name(repo)}",
        instruction=instruction,
        config=[
            SetupStep(
                type="download",
                parameters={
                    "files": [
                        {"url": str(scratch / UPLOAD_NAME), "path": f"{SANDBOX_HOME}/{UPLOAD_NAME}"}
                    ]
                },
            ),
            SetupStep(
                type="execute",
                parameters={
                    "command": f"tar -xf {UPLOAD_NAME} && rm -f {UPLOAD_NAME} && test -d "
                    f"{sandbox_path}",
                    "until": {"returncode": 0},
                },
            ),
        ],
        evaluator=Evaluator(func=[]),
        base_dir=scratch,
    )


def _apply_accepted(repo: Path, returned: Path, summary: CodeSummary) -> None:
    """Only a change the gate accepted is written into the user's repository."""
    if not summary.gate_passed or not (summary.added or summary.modified or summary.deleted):
        return
    try:
        apply_changes(repo, returned, summary)
        summary.applied = True
    except StateActError as exc:  # the patch stays in the run folder
        summary.error = str(exc)


def _pack(repo: Path, target: Path, name: str) -> None:
    """Tar the repository (without VCS data and caches) under the folder name it gets in the
    sandbox."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if any(part in IGNORED_NAMES for part in Path(info.name).parts):
            return None
        info.uid = info.gid = 1000
        info.uname = info.gname = "user"
        return info

    with tarfile.open(target, "w") as tar:
        tar.add(repo, arcname=name, filter=keep)


def changed_files(original: Path, returned: Path) -> tuple[list[str], list[str], list[str]]:
    """(added, modified, deleted) relative paths between two trees, ignoring VCS data and caches."""
    before, after = _files(original), _files(returned)
    added = sorted(after - before)
    deleted = sorted(before - after)
    modified = sorted(
        path
        for path in before & after
        if not filecmp.cmp(original / path, returned / path, shallow=False)
    )
    return added, modified, deleted


def _files(root: Path) -> set[str]:
    """Regular files under `root`, never through or including symbolic links.

    Links are left out on both sides: the sandbox copy-out skips them, so a link in the repository
    is neither "deleted" nor rewritten, and a change never travels through one.
    """
    found = set()
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in IGNORED_NAMES]
        for name in names:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                found.add(path.relative_to(root).as_posix())
    return found


def _record_changes(
    repo: Path, returned: Path, out_dir: Path, summary: CodeSummary, scratch: Path
) -> None:
    summary.added, summary.modified, summary.deleted = changed_files(repo, returned)
    if not (summary.added or summary.modified or summary.deleted):
        return
    patch = make_patch(repo, returned, summary, scratch)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / PATCH_NAME).write_text(patch, encoding="utf-8")
    summary.patch = str(out_dir / PATCH_NAME)


def make_patch(repo: Path, returned: Path, summary: CodeSummary, scratch: Path) -> str:
    """A git-style patch (binary-safe) from the original to the returned tree, paths relative to
    the repo."""
    if shutil.which("git") is None:
        raise StateActError(
            "computing the patch needs `git` on this machine; install git and run again."
        )
    # Only the changed files are staged, as a/ and b/, so the patch paths are exactly a/<path>,
    # b/<path>.
    for side, root, paths in (
        ("a", repo, summary.modified + summary.deleted),
        ("b", returned, summary.added + summary.modified),
    ):
        for relative in paths:
            target = scratch / "diff" / side / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / relative, target, follow_symlinks=False)
        (scratch / "diff" / side).mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            "git",
            "diff",
            "--no-index",
            "--binary",
            "--no-color",
            "--no-ext-diff",
            "--src-prefix=",
            "--dst-prefix=",
            "a",
            "b",
        ],
        cwd=scratch / "diff",
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):  # 1 means "there are differences"
        raise StateActError(f"git diff failed: {done.stderr.strip()[:300]}")
    return done.stdout


def apply_changes(repo: Path, returned: Path, summary: CodeSummary) -> None:
    """Write the returned tree's changes into the host repository, all or nothing.

    Every path is checked first (inside the repository, no symbolic link on the way, a regular
    file to copy); then the new contents are staged beside their targets and swapped in by
    rename, with the old files kept until every swap succeeded, so a failure leaves the
    repository as it was.
    """
    ApplyPlan(repo, returned, summary).run()


def summary_json(summary: CodeSummary) -> str:
    return json.dumps(asdict(summary), indent=2)
