"""Where a task's input and gold files live on the host: OSWorld's cache naming, or beside the
task file.

OSWorld downloads every URL a task names into a cache folder; the file is called
`uuid5(NAMESPACE_URL, url)_<basename>` (or sits under `<task id>/<basename>` in its per-task
layout). This harness never downloads: a URL is found in the cache dir or the task cannot run.
Self-contained suites name their files with paths relative to the task file instead.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from harness.kernel.core import StateActError

if TYPE_CHECKING:
    from tasks.schema import Task


def is_url(source: str) -> bool:
    """True for http(s) URLs, which come from a cache, as opposed to paths relative to the task."""
    return source.startswith(("http://", "https://"))


def url_basename(url: str) -> str:
    """The file name at the end of a URL's path, percent-decoded."""
    return unquote(Path(urlparse(url).path).name)


def cache_name(url: str) -> str:
    """OSWorld's cache file name for `url`."""
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{url_basename(url)}"


def cache_candidates(url: str, task_id: str, cache_dir: Path) -> list[Path]:
    """Every place in `cache_dir` where the file for `url` may be stored."""
    basename = url_basename(url)
    raw_basename = Path(urlparse(url).path).name
    names = [cache_dir / cache_name(url), cache_dir / task_id / basename]
    if raw_basename != basename:
        names.append(cache_dir / task_id / raw_basename)
    return names


HOST_PATHS_HINT = "pass --allow-host-paths to allow files elsewhere on this machine"


def inside(path: Path, root: Path) -> bool:
    """True when `path`, with every link resolved, lies under `root` (links resolved too)."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, ValueError):  # a name too long, or a NUL
        return False


def is_file(path: Path) -> bool:
    """`path.is_file()` that answers False for names the file system cannot hold."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def confined(path: Path, roots: list[Path], refusal: str) -> Path:
    """`path` when it resolves under one of `roots`; otherwise StateActError(`refusal`)."""
    if "\x00" in str(path):
        raise StateActError(f"{refusal} (it contains a NUL character)")
    if not any(inside(path, root) for root in roots):
        raise StateActError(refusal)
    return path


def find_cached(url: str, task_id: str, cache_dir: Path | None) -> Path | None:
    """The cached copy of `url`, or None when there is none (a name that leaves the cache is
    none)."""
    if cache_dir is None:
        return None
    return next(
        (
            p
            for p in cache_candidates(url, task_id, Path(cache_dir))
            if is_file(p) and inside(p, cache_dir)
        ),
        None,
    )


def task_roots(task: Task, cache_dir: Path | None) -> list[Path]:
    """Where a task's file references may point: its folder, the cache and what the harness
    added."""
    from tasks.schema import reference_root

    return [reference_root(task), *([Path(cache_dir)] if cache_dir else []), *task.extra_roots]


def local_reference(url_or_path: str, task: Task, cache_dir: Path | None) -> Path:
    """The host path a task's non-URL file reference names, confined to the task's roots.

    A `file://` URL is read as its (percent-decoded) path. Absolute paths and paths that climb out
    of the task's folder are refused unless the task allows host paths.
    """
    text = url_or_path
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    path = Path(text)
    path = path if path.is_absolute() else task.base_dir / path
    if task.allow_host_paths:
        return path
    return confined(
        path,
        task_roots(task, cache_dir),
        f"file {url_or_path} named by task {task.id} is outside the task's folder and the cache; "
        f"{HOST_PATHS_HINT}.",
    )


def resolve_source(url_or_path: str, task: Task, cache_dir: Path | None) -> Path:
    """The host file a task's `url`/`path` refers to; raises StateActError when it is not
    available."""
    if not is_url(url_or_path):
        path = local_reference(url_or_path, task, cache_dir)
        if not is_file(path):
            raise StateActError(
                f"file {url_or_path} named by task {task.id} does not exist ({path})"
            )
        return path.resolve()  # the file itself, so a backend copies its content, not a link
    found = find_cached(url_or_path, task.id, cache_dir)
    if found is None:
        where = f"the cache dir {cache_dir}" if cache_dir else "any cache dir (none was given)"
        raise StateActError(f"{url_or_path} is not in {where}")
    return found
