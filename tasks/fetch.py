"""Download the files tasks name into OSWorld's cache layout (`stateact cache fetch`).

Each URL goes to `DIR/<uuid5(url)>_<basename>`, the name `tasks.cache` looks up first. A download
is written under `DIR/.partial/` and renamed into place when complete, so the cache never holds a
half-written file; an interrupted download continues from its partial file when the server
honours ranges, and files already in the cache are not fetched again.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from harness.kernel.core import StateActError
from tasks.cache import cache_name, confined, find_cached, is_url
from tasks.schema import load_task
from tasks.support import file_references

PARTIAL_DIR = ".partial"
CHUNK = 1 << 16
TIMEOUT_S = 30.0

# (url, bytes done, bytes total or None): called as a download advances.
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class Wanted:
    """One file to have in the cache: its URL and the task that first names it."""

    url: str
    task_id: str


@dataclass
class FetchReport:
    """What `fetch_all` did."""

    fetched: list[str] = field(default_factory=list)
    """URLs downloaded now."""
    present: list[str] = field(default_factory=list)
    """URLs already in the cache."""
    failed: dict[str, str] = field(default_factory=dict)
    """URL → why it could not be downloaded."""


def wanted_files(task_paths: Iterable[Path]) -> list[Wanted]:
    """Every URL the tasks name (download steps, cloud files), each once, in order."""
    seen: dict[str, Wanted] = {}
    for path in task_paths:
        task = load_task(path)
        for reference in file_references(task):
            if is_url(reference) and reference not in seen:
                seen[reference] = Wanted(reference, task.id)
    return list(seen.values())


def cache_target(url: str, cache_dir: Path) -> Path:
    """Where `url` goes in `cache_dir`; StateActError for a name that would leave it."""
    name = cache_name(url)
    refusal = f"{url} would be written outside the cache dir {cache_dir}; refused."
    if "/" in name or "\\" in name:  # a percent-encoded slash in the URL's last segment
        raise StateActError(refusal)
    target = cache_dir / name
    confined(target, [cache_dir], refusal)
    return target


PRIVATE = [
    ipaddress.ip_network(net)
    for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "fc00::/7")
]


def check_host(url: str) -> None:
    """Refuse URLs whose host is in a private or link-local range (a task file may be hostile)."""
    host = urlparse(url).hostname or ""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise OSError(f"the host {host!r} is unknown ({exc})") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if any(address in net for net in PRIVATE):
            raise OSError(f"the host {host!r} is a private address ({address}); refused")


class CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an http(s) URL whose host passes `check_host`."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not is_url(newurl):
            raise urllib.error.URLError(f"redirect to {newurl!r} refused")
        check_host(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


OPENER = urllib.request.build_opener(CheckedRedirects)


def download(url: str, target: Path, progress: Progress, timeout: float = TIMEOUT_S) -> None:
    """Download `url` to `target` through a partial file, resuming one left by an earlier try."""
    check_host(url)
    partial = target.parent / PARTIAL_DIR / target.name
    partial.parent.mkdir(parents=True, exist_ok=True)
    confined(partial, [target.parent], f"{partial} leaves the cache dir (a link?); refused.")
    done = partial.stat().st_size if partial.is_file() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "stateact-cache-fetch"})
    if done:
        request.add_header("Range", f"bytes={done}-")
    with OPENER.open(request, timeout=timeout) as response:
        resumed = done and response.status == 206
        done = done if resumed else 0
        length = response.headers.get("Content-Length")
        total = done + int(length) if length and length.isdigit() else None
        with open(partial, "ab" if resumed else "wb") as out:
            progress(url, done, total)
            while chunk := response.read(CHUNK):
                out.write(chunk)
                done += len(chunk)
                progress(url, done, total)
            out.flush()
            os.fsync(out.fileno())
    if total is not None and done != total:
        raise OSError(f"the server sent {done} of {total} bytes")
    os.replace(partial, target)


def fetch_all(
    wanted: list[Wanted],
    cache_dir: Path,
    progress: Progress = lambda url, done, total: None,
    timeout: float = TIMEOUT_S,
) -> FetchReport:
    """Download every wanted file missing from `cache_dir`; failures are reported, not raised."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    targets = [cache_target(item.url, cache_dir) for item in wanted]  # refuse before fetching
    report = FetchReport()
    for item, target in zip(wanted, targets, strict=True):
        if find_cached(item.url, item.task_id, cache_dir) is not None:
            report.present.append(item.url)
            continue
        try:
            download(item.url, target, progress, timeout)
        except (OSError, urllib.error.URLError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            report.failed[item.url] = str(reason)
            continue
        report.fetched.append(item.url)
    return report
