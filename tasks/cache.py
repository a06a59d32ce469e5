"""Where a task's input and gold files live on the host: OSWorld's cache naming, or beside the task file.

OSWorld downloads every URL a task names into a cache folder; the file is called
`uuid5(NAMESPACE_URL, url)_<basename>` (or sits under `<task id>/<basename>` in its per-task layout).
This harness never downloads: a URL is found in the cache dir or the task cannot run. Self-contained
suites name their files with paths relative to the task file instead.
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


def find_cached(url: str, task_id: str, cache_dir: Path | None) -> Path | None:
    """The cached copy of `url`, or None when there is none."""
    if cache_dir is None:
        return None
    return next((p for p in cache_candidates(url, task_id, Path(cache_dir)) if p.is_file()), None)


def resolve_source(url_or_path: str, task: Task, cache_dir: Path | None) -> Path:
    """The host file a task's `url`/`path` refers to; raises StateActError when it is not available."""
    if not is_url(url_or_path):
        path = Path(url_or_path)
        path = path if path.is_absolute() else task.base_dir / path
        if not path.is_file():
            raise StateActError(
                f"file {url_or_path} named by task {task.id} does not exist ({path})"
            )
        return path
    found = find_cached(url_or_path, task.id, cache_dir)
    if found is None:
        where = f"the cache dir {cache_dir}" if cache_dir else "any cache dir (none was given)"
        raise StateActError(f"{url_or_path} is not in {where}")
    return found
