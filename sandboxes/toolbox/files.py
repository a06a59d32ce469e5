"""Whole-file transfer, stat, and the scan for files a run changed."""

from __future__ import annotations

import base64
import binascii
import os
import stat

from .errors import BadRequest, ToolError

SKIPPED_DIRS = frozenset({".cache", "__pycache__"})


def _absolute(path: str) -> str:
    if not os.path.isabs(path):
        raise ToolError(f"The path {path} is not an absolute path; it should start with `/`.")
    return path


def read_file(path: str, max_bytes: int = 200_000_000) -> dict:
    path = _absolute(path)
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{path} is a directory, not a file.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(special_file_message(path, info.st_mode))
        if info.st_size > max_bytes:
            raise ToolError(
                f"{path} has {info.st_size:,} bytes, more than the limit of {max_bytes:,}."
            )
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise ToolError(f"The file {path} does not exist.") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror}.") from exc
    if len(data) > max_bytes:
        raise ToolError(f"{path} grew past the limit of {max_bytes:,} bytes while being read.")
    return {
        "data_b64": base64.b64encode(data).decode("ascii"),
        "size": len(data),
        "mtime": info.st_mtime,
    }


def special_file_message(path: str, mode: int) -> str:
    """Why a FIFO, socket or device file is not read (opening a FIFO waits for a writer)."""
    kind = (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device file"
    )
    return f"{path} is {kind}, not a regular file; it holds no content to read."


def write_file(path: str, data_b64: str, mode: int | None = None, mkdirs: bool = True) -> dict:
    path = _absolute(path)
    try:
        data = base64.b64decode(data_b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest("param `data_b64` is not valid base64.") from exc
    try:
        if mkdirs:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(path, mode)
    except OSError as exc:
        raise ToolError(f"Cannot write {path}: {exc.strerror}.") from exc
    return {"size": len(data)}


def stat_file(path: str) -> dict:
    path = _absolute(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return {"exists": False, "is_dir": False, "size": 0, "mtime": 0.0}
    except OSError as exc:
        raise ToolError(f"Cannot stat {path}: {exc.strerror}.") from exc
    return {
        "exists": True,
        "is_dir": stat.S_ISDIR(info.st_mode),
        "size": info.st_size,
        "mtime": info.st_mtime,
    }


WALK_MAX_DEPTH = 64
"""Folders deeper than this below a root are not listed (a 1500-deep tree in /tmp is an attack on
the walk, not work)."""
WALK_MAX_ENTRIES = 200_000
"""Most directory entries one walk looks at before it stops and says the list is truncated."""


def changed_files(since: float, roots: list[str], limit: int, skip: tuple[str, ...] = ()) -> dict:
    """Regular files under `roots` modified after `since`, newest first; caches and `skip` dirs
    excluded. The walk is iterative with a depth and an entry cap, so no tree the agent builds
    can make it fail or run without end; `truncated` says when a cap left something out."""
    found: dict[str, tuple[float, int]] = {}
    seen, capped = 0, False
    for root in roots:
        _absolute(root)
        stack = [(root, 0)]
        while stack:
            directory, depth = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > WALK_MAX_ENTRIES:
                    capped, stack = True, []
                    break
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in SKIPPED_DIRS or entry.path in skip:
                            continue
                        if depth + 1 > WALK_MAX_DEPTH:
                            capped = True
                            continue
                        stack.append((entry.path, depth + 1))
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_mtime > since:
                    found[entry.path] = (info.st_mtime, info.st_size)
    newest = sorted(found.items(), key=lambda item: item[1][0], reverse=True)
    paths = [{"path": p, "mtime": m, "size": s} for p, (m, s) in newest[:limit]]
    return {"paths": paths, "truncated": capped or len(newest) > limit}
