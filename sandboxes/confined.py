"""Host-side file copies that stay inside one folder whatever the sandbox put there.

A sandbox path becomes a host path only through `sandbox_parts` (absolute, normalised, no NUL, no
`..` left). Copies then walk the folder one component at a time with `O_NOFOLLOW`, each step
opened relative to the folder above it, so a symbolic link the agent made (even one swapped in
while the copy runs) is refused instead of followed out to the host. Copies out skip links,
sockets, FIFOs and devices and keep only the permission bits of a file (never setuid, setgid or
sticky).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from .agent_files import COPY_DEPTH_LIMIT, COPY_LIMIT_BYTES, copy_stream
from .base import SandboxError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
PERMISSION_BITS = 0o777
CHUNK = 1 << 20


def sandbox_parts(sandbox_path: str) -> PurePosixPath:
    """`sandbox_path` normalised; raises SandboxError for a relative path, NUL or a climb above
    /."""
    text = str(sandbox_path)
    if "\x00" in text:
        raise SandboxError(f"the sandbox path {text!r} contains a NUL character.")
    if not text.startswith("/"):
        raise SandboxError(f"the sandbox path {text!r} must be absolute (start with /).")
    return PurePosixPath(posixpath.normpath("/" + text.lstrip("/")))


@contextmanager
def open_dir(root: Path, parts: tuple[str, ...], create: bool = False) -> Iterator[int]:
    """A file descriptor of `root/parts…`, walked without following any link; made when `create`."""
    fd = os.open(root, DIR_FLAGS)
    try:
        for index, name in enumerate(parts):
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(exc, parts[: index + 1]) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _refusal(exc: OSError, parts: tuple[str, ...]) -> OSError:
    where = "/".join(parts)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return SandboxError(
            f"the sandbox path passes through {where}, which is a symbolic link or not a folder; "
            "files are copied only through real folders."
        )
    if exc.errno == errno.ENOENT:
        return FileNotFoundError(where)
    return exc


def copy_in(source: Path, root: Path, parts: tuple[str, ...]) -> None:
    """Copy the host file or folder `source` to `root/parts…` (the last part is the new name)."""
    if not parts:
        raise SandboxError("cannot copy onto the top of a sandbox folder; name a file inside it.")
    with open_dir(root, parts[:-1], create=True) as parent:
        _copy_in_entry(Path(source), parent, parts[-1], parts)


def _copy_in_entry(source: Path, parent: int, name: str, parts: tuple[str, ...]) -> None:
    info = source.lstat()
    if stat.S_ISLNK(info.st_mode):
        return  # a task's folder is data: its links are not copied (they would point at the host)
    if stat.S_ISDIR(info.st_mode):
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            pass
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise _refusal(exc, parts) from None
        try:
            for child in sorted(source.iterdir()):
                _copy_in_entry(child, fd, child.name, (*parts, child.name))
        finally:
            os.close(fd)
        return
    if not stat.S_ISREG(info.st_mode):
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, info.st_mode & PERMISSION_BITS, dir_fd=parent)
    except OSError as exc:
        raise _refusal(exc, parts) from None
    with open(source, "rb") as src, os.fdopen(fd, "wb") as dst:
        while chunk := src.read(CHUNK):
            dst.write(chunk)
        os.fchmod(dst.fileno(), info.st_mode & PERMISSION_BITS)


def copy_out(root: Path, parts: tuple[str, ...], target: Path, cap: int = COPY_LIMIT_BYTES) -> None:
    """Copy `root/parts…` (a file or a folder) to the host path `target`; links are refused or
    skipped; at most `cap` bytes (holes kept) and COPY_DEPTH_LIMIT levels are written."""
    if not parts:
        raise SandboxError(
            "cannot copy the top of a sandbox folder; name a file or folder inside it."
        )
    with open_dir(root, parts[:-1]) as parent:
        try:
            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise FileNotFoundError("/".join(parts)) from None
        if stat.S_ISLNK(info.st_mode):
            raise SandboxError(
                f"{'/'.join(parts)} is a symbolic link; copy out the file it points to instead."
            )
        target = host_target(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        _copy_out_entry(parent, parts[-1], target, [cap], "/".join(parts))


def _copy_out_entry(
    parent: int, name: str, target: Path, budget: list[int], label: str, depth: int = 0
) -> None:
    """One entry; `budget` holds the bytes the whole copy may still write."""
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent
        )
    except OSError:
        return  # a link, or something that vanished or cannot be opened: not part of the copy
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            if depth > COPY_DEPTH_LIMIT:
                return  # a folder this deep is an attack on the walk, not work
            target.mkdir(exist_ok=True)
            for entry in sorted(os.listdir(fd)):
                _copy_out_entry(fd, entry, target / entry, budget, label, depth + 1)
            return
        if not stat.S_ISREG(info.st_mode):
            return  # sockets, FIFOs and devices hold no file content
        budget[0] -= _write_host_file(fd, target, info.st_mode & PERMISSION_BITS, budget[0], label)
    finally:
        os.close(fd)


def _write_host_file(source_fd: int, target: Path, mode: int, cap: int, label: str) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        out = os.open(target, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SandboxError(f"will not write through the symbolic link {target}.") from None
        raise
    try:
        os.lseek(source_fd, 0, os.SEEK_SET)
        with os.fdopen(os.dup(source_fd), "rb", closefd=True) as src:
            written = copy_stream(src, out, cap, label)
        os.fchmod(out, mode)
    finally:
        os.close(out)
    return written


def host_target(host_path: Path) -> Path:
    """`host_path` when its last part names a file or folder; `x/..` (a name the sandbox chose,
    such as the basename of `/home/user/..`) would land in the folder above."""
    host_path = Path(host_path)
    if host_path.name in ("", ".", "..") or str(host_path).endswith(("/.", "/..")):
        raise SandboxError(f"the host path {host_path} does not name a file or folder to copy to.")
    return host_path


def is_special(path: str) -> bool:
    """True for sockets, FIFOs and device files (a snapshot cannot copy them)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def skip_special(folder: str, names: list[str]) -> list[str]:
    """A `shutil.copytree` ignore function that leaves out sockets, FIFOs and devices."""
    return [name for name in names if is_special(os.path.join(folder, name))]
