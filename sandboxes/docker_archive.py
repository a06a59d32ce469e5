"""What a Docker archive (`get_archive`) holds, extracted onto the host safely and under caps."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path, PurePosixPath

from .agent_files import COPY_DEPTH_LIMIT, COPY_MEMBER_LIMIT, FileLimitError, copy_stream
from .base import SandboxError
from .confined import PERMISSION_BITS

GO_MODE_DIR = 1 << 31
GO_MODE_SYMLINK = 1 << 27
GO_SPECIAL_MODES = (
    (1 << 25, "FIFO (named pipe)"),
    (1 << 24, "socket"),
    (1 << 26, "device file"),
    (1 << 19, "special file"),
)


def extract_as(tar: tarfile.TarFile, host_path: Path, cap: int, label: str) -> None:
    """Extract the streamed archive's top entry (file or directory) to `host_path`, safely.

    Links, devices and FIFOs are skipped, names that climb out are dropped, files keep their
    permission bits (not setuid/setgid/sticky) and no write goes through a link on the host. At
    most `cap` bytes, COPY_MEMBER_LIMIT entries and COPY_DEPTH_LIMIT levels are written.
    """
    top, budget, count = None, cap, 0
    for member in tar:
        top = top or member.name.split("/")[0]
        relative = PurePosixPath(member.name).relative_to(top)
        if not (member.isdir() or member.isfile()) or ".." in relative.parts:
            continue
        if len(relative.parts) > COPY_DEPTH_LIMIT:
            continue
        count += 1
        if count > COPY_MEMBER_LIMIT:
            raise FileLimitError(
                f"{label} holds more than {COPY_MEMBER_LIMIT:,} files and folders; not copied out."
            )
        destination = host_path / relative if relative.parts else host_path
        inside = [p for p in (destination, *destination.parents) if p.is_relative_to(host_path)]
        if any(p.is_symlink() for p in inside):
            raise SandboxError(
                f"will not write through the symbolic link on the way to {destination}."
            )
        if member.isdir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        with tar.extractfile(member) as src:
            fd = os.open(destination, flags, 0o600)
            try:
                budget -= copy_stream(src, fd, budget, label)
                os.fchmod(fd, member.mode & PERMISSION_BITS)
            finally:
                os.close(fd)
    if top is None:
        raise FileNotFoundError(str(host_path))


def special_kind(go_mode: int) -> str | None:
    """What a Docker archive stat's mode (Go's os.FileMode bits) says the path is, when it is not
    a file, folder or link."""
    for bit, kind in GO_SPECIAL_MODES:
        if go_mode & bit:
            return kind
    return None
