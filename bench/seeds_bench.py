"""The seeds' options: recalling lessons from a full store, and starting best-of rollouts from a
post-setup snapshot (local backend), each beside the plainest way."""

from __future__ import annotations

import re
import shutil
import tempfile

from harness.control.memory import MAX_LESSONS, LessonStore
from sandboxes import SandboxConfig, open_sandbox

from . import Row, median_time, row

APPS = ["calc", "writer", "impress", "thunderbird", "chromium", "vscode", "gimp", "vlc"]
QUERY = "In calc, update report-17.dat with the figures of quarter 2 and keep the formulas"


def _fill(store: LessonStore) -> list[tuple[str, str]]:
    rows = []
    for n in range(MAX_LESSONS):
        app = APPS[n % len(APPS)]
        instruction = f"In {app}, update report-{n}.dat with the figures of quarter {n % 4 + 1}"
        text = f"The finish gate rejected: report-{n}.dat unchanged ({app}); fixed by saving it"
        store.add("gate-fix", f"t{n}", instruction, text)
        rows.append((instruction, text))
    return rows


def _scan(rows: list[tuple[str, str]], query: str, limit: int = 3) -> list[str]:
    """The plainest recall: count shared words with every lesson, keep the best few."""
    words = set(re.findall(r"[a-z0-9_]{3,}", query.lower()))
    scored = [
        (len(words & set(re.findall(r"[a-z0-9_]{3,}", f"{a} {b}".lower()))), b) for a, b in rows
    ]
    return [text for score, text in sorted(scored, reverse=True)[:limit] if score]


def _recall_rows() -> list[Row]:
    with tempfile.TemporaryDirectory() as folder, LessonStore(folder) as store:
        rows = _fill(store)
        runs = 50
        ours = median_time(lambda: store.search(QUERY), runs)
        plain = median_time(lambda: _scan(rows, QUERY), runs)
    return [
        row(
            f"lesson recall, {MAX_LESSONS}-lesson store (SQLite FTS5, BM25)",
            ours,
            runs,
            "word-overlap scan of every lesson in memory",
            plain,
            note="once per run, before the first request",
        )
    ]


def _rollout_rows() -> list[Row]:
    if not shutil.which("bwrap"):
        return []
    config = SandboxConfig(backend="local")
    with open_sandbox(config) as setup:
        setup.call("bash.run", command="head -c 20000000 /dev/urandom > /home/user/input.bin")

        def from_snapshot() -> None:
            snapshot = setup.snapshot()
            sandboxes = [open_sandbox(config, snapshot) for _ in range(2)]
            for sandbox in sandboxes:
                sandbox.close()
            setup.discard_snapshot(snapshot)

        def fresh() -> None:
            for sandbox in [open_sandbox(config) for _ in range(2)]:
                sandbox.close()

        runs = 5
        ours = median_time(from_snapshot, runs)
        plain = median_time(fresh, runs)
    return [
        row(
            "best-of-2 start: snapshot + 2 sandboxes from it (local, 20 MB of task files)",
            ours,
            runs,
            "2 fresh sandboxes (no task files, no setup)",
            plain,
            note="the setup itself is not repeated per rollout",
        )
    ]


def rows() -> list[Row]:
    return _recall_rows() + _rollout_rows()
