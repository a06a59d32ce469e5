"""`stateact cache fetch PATH… --cache DIR`: download every file the tasks name into OSWorld's
cache layout, so `run`/`suite --cache DIR` find them."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.apps.suite import discover_tasks
from harness.kernel.core import StateActError
from harness.kernel.display import visible
from tasks.fetch import TIMEOUT_S, fetch_all, wanted_files


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="download the files tasks name into a cache folder",
        description="`stateact cache fetch PATH… --cache DIR` downloads every file the task files "
        "under PATH… name (download steps, cloud files) into DIR with OSWorld's cache names. Files "
        "already there are kept; an interrupted download resumes. Exit 0 when every file is in "
        "DIR, 1 when some could not be downloaded (each is named), 2 on bad input.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = actions.add_parser("fetch", help="download the tasks' files into --cache DIR")
    fetch.add_argument("paths", nargs="+", metavar="PATH", help="task files or folders")
    fetch.add_argument("--cache", required=True, help="the cache folder (created if missing)")
    fetch.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT_S,
        help=f"seconds per request (default {TIMEOUT_S:g})",
    )
    parser.set_defaults(handler=run)


def run(args) -> int:
    cache = Path(args.cache)
    if cache.exists() and not cache.is_dir():
        raise StateActError(f"--cache {cache} is not a folder.")
    wanted = wanted_files(discover_tasks(args.paths))
    with FetchProgress(len(wanted), enabled=sys.stderr.isatty()) as progress:
        report = fetch_all(wanted, cache, progress.update, timeout=args.timeout)
    say(
        f"{len(wanted)} file(s) named by the tasks: {len(report.fetched)} downloaded, "
        f"{len(report.present)} already in {cache}, {len(report.failed)} missing"
    )
    if report.failed:
        missing = "; ".join(f"{url} ({why})" for url, why in report.failed.items())
        say(f"stateact: {len(report.failed)} file(s) could not be downloaded: {missing}.")
        return 1
    return 0


class FetchProgress:
    """A rich byte-count bar per file on a terminal; a line per finished file otherwise."""

    def __init__(self, files: int, enabled: bool):
        self.bar = None
        self.tasks: dict[str, int] = {}
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TransferSpeedColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=Console(stderr=True),
            )

    def __enter__(self) -> FetchProgress:
        if self.bar:
            self.bar.start()
        return self

    def update(self, url: str, done: int, total: int | None) -> None:
        if self.bar is None:
            if total is not None and done == total:
                say(f"fetched {url} ({done} bytes)")
            return
        from rich.markup import escape

        if url not in self.tasks:
            name = escape(visible(url.rsplit("/", 1)[-1][:60]))
            self.tasks[url] = self.bar.add_task(name, total=total)
        self.bar.update(self.tasks[url], completed=done, total=total)

    def __exit__(self, *exc_info) -> None:
        if self.bar:
            self.bar.stop()


def say(text: str) -> None:
    print(visible(text, keep_lines=True), file=sys.stderr, flush=True)
