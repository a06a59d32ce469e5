"""`stateact code --apply`: a returned tree's changes written into the user's repository atomically.

The repository is the user's: nothing is written outside it, nothing through a symbolic link in it,
file modes come from the returned files (an executable stays executable), and either every change
lands or none does.
"""

from __future__ import annotations

import os
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from harness.kernel.core import StateActError

PERMISSION_BITS = 0o777


class Changes(Protocol):
    added: list[str]
    modified: list[str]
    deleted: list[str]


@dataclass
class Swap:
    """One target: its staged new content (None to delete) and where the old file was moved."""

    target: Path
    staged: Path | None
    backup: Path | None = None
    done: bool = False
    """True once the new content (or the deletion) is in place."""


@dataclass
class ApplyPlan:
    """Check, stage, swap, and roll back on any failure."""

    repo: Path
    returned: Path
    changes: Changes
    swaps: list[Swap] = field(default_factory=list)
    made_dirs: list[Path] = field(default_factory=list)
    staged_files: list[Path] = field(default_factory=list)

    def run(self) -> None:
        self.repo = Path(self.repo).resolve()
        writes = [*self.changes.added, *self.changes.modified]
        for relative in [*writes, *self.changes.deleted]:
            self._check_target(relative)
        for relative in writes:
            self._check_source(relative)
        try:
            for relative in writes:
                self.swaps.append(Swap(self.repo / relative, self._stage(relative)))
            self.swaps += [Swap(self.repo / relative, None) for relative in self.changes.deleted]
            for swap in self.swaps:
                self._swap(swap)
        except BaseException as exc:
            self._roll_back()
            if not isinstance(exc, OSError):
                raise
            raise StateActError(
                f"applying the change failed ({exc.strerror or exc}); the repository is unchanged."
            ) from None
        for swap in self.swaps:
            if swap.backup is not None:
                swap.backup.unlink(missing_ok=True)

    def _check_target(self, relative: str) -> None:
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts or "\x00" in relative or not pure.parts:
            raise StateActError(
                f"the change names {relative!r}, which is not inside the repository."
            )
        path = self.repo
        for part in pure.parts:
            path = path / part
            if path.is_symlink():
                raise StateActError(
                    "the change goes through the symbolic link "
                    f"{path.relative_to(self.repo)} in the "
                    "repository; nothing was applied (apply changes.patch by hand if it is right)."
                )

    def _check_source(self, relative: str) -> None:
        source = self.returned / relative
        if source.is_symlink() or not source.is_file():
            raise StateActError(
                f"the returned {relative} is not a regular file; nothing was applied."
            )

    def _stage(self, relative: str) -> Path:
        target = self.repo / relative
        self._make_parents(target.parent)
        source = self.returned / relative
        mode = source.stat().st_mode & PERMISSION_BITS
        staged = target.with_name(f".{target.name}.stateact-{uuid.uuid4().hex[:8]}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        descriptor = os.open(staged, flags, 0o600)
        self.staged_files.append(staged)
        with open(source, "rb") as src, os.fdopen(descriptor, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
            os.fchmod(dst.fileno(), mode)
        return staged

    def _make_parents(self, folder: Path) -> None:
        missing = []
        while not folder.exists() and folder != self.repo:
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            path.mkdir()
            self.made_dirs.append(path)

    def _swap(self, swap: Swap) -> None:
        target = swap.target
        if os.path.lexists(target):
            if not stat.S_ISREG(os.lstat(target).st_mode):
                raise OSError(0, f"{target.relative_to(self.repo)} is not a regular file")
            swap.backup = target.with_name(f".{target.name}.stateact-old-{uuid.uuid4().hex[:8]}")
            os.rename(target, swap.backup)
        if swap.staged is not None:
            os.rename(swap.staged, target)
        swap.done = True

    def _roll_back(self) -> None:
        for swap in reversed(self.swaps):
            if swap.done and swap.staged is not None:
                swap.target.unlink(missing_ok=True)
            if swap.backup is not None:
                os.rename(swap.backup, swap.target)
        for staged in self.staged_files:
            staged.unlink(missing_ok=True)
        for folder in reversed(self.made_dirs):
            try:
                folder.rmdir()
            except OSError:
                pass
