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


def changed_files(since: float, roots: list[str], limit: int, skip: tuple[str, ...] = ()) -> dict:
    """Regular files under `roots` modified after `since`, newest first; caches and `skip` dirs
    excluded."""
    found: dict[str, tuple[float, int]] = {}
    for root in roots:
        _absolute(root)
        for directory, dirs, files in os.walk(root, onerror=lambda _: None):
            dirs[:] = [
                d for d in dirs if d not in SKIPPED_DIRS and os.path.join(directory, d) not in skip
            ]
            for name in files:
                path = os.path.join(directory, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_mtime > since:
                    found[path] = (info.st_mtime, info.st_size)
    newest = sorted(found.items(), key=lambda item: item[1][0], reverse=True)
    paths = [{"path": p, "mtime": m, "size": s} for p, (m, s) in newest[:limit]]
    return {"paths": paths, "truncated": len(newest) > limit}
