"""An output folder owned by one run: its lock, stored configuration, retries and exit codes.

Suites, batches and experiments write many files into one OUT; two runs writing it at once, or a
`--resume` under a different model, would mix results that no summary can untangle. So:

- `OutLock(out, what)` holds an exclusive `fcntl` lock on `OUT/.stateact.lock` while a run writes
  OUT, and writes who holds it (pid, host, command, start time) into the file, so a second run is
  refused with one sentence naming the holder. The kernel drops the lock when the holder dies, so a
  killed run never leaves OUT locked.
- `OUT/run.json` keeps the run's identity (`run_identity`: model, preset, control mode, the task
  set, the options results are compared by). `check_identity` refuses a `--resume` whose identity
  differs, naming each difference, unless forced.
- `ERROR_STATUSES` are the ends that are the machine's or the provider's fault, not a verdict on the
  agent; `--retry-errors` reruns those, and `exit_code` turns them into 0/1 with `--fail-on-error`.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

from harness.kernel.core import StateActError
from harness.kernel.records import write_json_atomic
from harness.kernel.secrets import redact

LOCK_NAME = ".stateact.lock"
IDENTITY_NAME = "run.json"
HISTORY_DIR = "history"

ERROR_STATUSES = frozenset(
    {"model_error", "sandbox_error", "setup_error", "error", "invalid_task", "node_lost"}
)
"""Ends that are not a verdict: the provider, the sandbox, the setup or the task file failed."""

IDENTITY_KEYS = ("model", "preset", "control", "tasks")
"""What must match for a resumed run to continue the same experiment."""


class OutLock:
    """An exclusive lock on OUT for the life of a run (a context manager)."""

    def __init__(self, out_dir: str | Path, what: str):
        self.out_dir = Path(out_dir)
        self.what = what
        self.path = self.out_dir / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> OutLock:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StateActError(
                f"{self.out_dir} is being written by another run ({holder}); wait for it to "
                "finish or choose another --out."
            ) from None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "what": self.what,
            "command": " ".join(sys.argv[:1] + sys.argv[1:])[:300],
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        holder = {}
    if not holder:
        return "a process that has not yet said who it is"
    return (
        f"{holder.get('what', 'a run')}, pid {holder.get('pid')} on {holder.get('host')}, "
        f"since {holder.get('started')}"
    )


def run_identity(model: str, preset: str, control: str, tasks: list[str], **extra) -> dict:
    """What a run into OUT is; `tasks` are the task files (or input files) it covers."""
    return {"model": model, "preset": preset, "control": control, "tasks": sorted(tasks), **extra}


def differences(stored: dict, current: dict) -> list[str]:
    """Each key of IDENTITY_KEYS (and `options`) whose value differs, said in words."""
    changed = []
    for key in (*IDENTITY_KEYS, "options"):
        if key not in stored or stored.get(key) == current.get(key):
            continue
        if key == "tasks":
            old, new = set(stored[key]), set(current.get(key) or [])
            changed.append(f"the task set ({len(new - old)} added, {len(old - new)} removed)")
        else:
            changed.append(f"{key} {stored[key]!r} → {current.get(key)!r}")
    return changed


def check_identity(out_dir: str | Path, identity: dict, resume: bool, force: bool) -> None:
    """Store `identity` in OUT/run.json; on resume, refuse one that differs unless `force`."""
    path = Path(out_dir) / IDENTITY_NAME
    if resume and path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        changed = differences(stored, identity)
        if changed and not force:
            raise StateActError(
                f"{out_dir} holds a run with a different configuration ({'; '.join(changed)}); "
                "resume it with the same settings, pass --force to mix them, or choose another "
                "--out."
            )
        if changed:
            identity = {**identity, "forced_from": stored}
    write_json_atomic(path, identity)


def is_error(row: dict) -> bool:
    return str(row.get("status")) in ERROR_STATUSES


def latest_rows(rows: list[dict], key: str = "task_id") -> list[dict]:
    """The last row per `key`, in the order each key first appeared (results.jsonl keeps every
    attempt; what a summary counts is the latest)."""
    latest: dict = {}
    for row in rows:
        latest[row.get(key)] = row
    return list(latest.values())


def parse_fail_on_error(value: str | float | int | None) -> float | None:
    """`--fail-on-error`: None (any error fails), a count N >= 1 or a fraction 0 <= f < 1."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise StateActError(
            f"--fail-on-error takes a count (3) or a fraction (0.1), not {value!r}."
        ) from None
    if number < 0 or (number >= 1 and number != int(number)):
        raise StateActError(
            f"--fail-on-error takes a count (3) or a fraction (0.1), not {value!r}."
        )
    return number


def error_count(rows: list[dict]) -> int:
    return sum(1 for row in rows if is_error(row))


def exit_code(rows: list[dict], fail_on_error: float | None = None, unfinished: int = 0) -> int:
    """0 when every task reached a verdict (or the errors are within `fail_on_error`), else 1.

    `fail_on_error` (as Inspect's): None fails on any error; a count N >= 1 fails when more than N
    tasks ended in an error; a fraction f < 1 when more than that share of the tasks did.
    Unfinished tasks (a stopped run) count as errors.
    """
    errors = error_count(rows) + unfinished
    total = len(rows) + unfinished
    if errors == 0:
        return 0
    if fail_on_error is None:
        return 1
    if fail_on_error >= 1:
        return 1 if errors > fail_on_error else 0
    return 1 if total and errors / total > fail_on_error else 0


def error_sentence(rows: list[dict]) -> str:
    """`2 of 5 tasks ended in an error (model_error 2)`, or '' when none did."""
    errored = [row for row in rows if is_error(row)]
    if not errored:
        return ""
    counts: dict[str, int] = {}
    for row in errored:
        counts[str(row["status"])] = counts.get(str(row["status"]), 0) + 1
    detail = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    return f"{len(errored)} of {len(rows)} task(s) ended in an error ({detail})"


def move_to_history(run_dir: Path, out_dir: Path) -> Path:
    """Move an errored run's folder to OUT/history/<name>/attempt-N before it is run again."""
    folder = out_dir / HISTORY_DIR / run_dir.name
    folder.mkdir(parents=True, exist_ok=True)
    attempt = 1 + sum(1 for p in folder.iterdir() if p.name.startswith("attempt-"))
    target = folder / f"attempt-{attempt}"
    run_dir.rename(target)
    return target


class ResultsFile:
    """results.jsonl: one full line per task, written in one call under a lock and flushed to
    disk."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()

    def lines(self) -> list[dict]:
        """Every complete line, earlier attempts of retried tasks included."""
        if not self.path.exists():
            return []
        rows = []
        for text in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if isinstance(row, dict) and "task_id" in row:
                rows.append(row)
        return rows

    def task_ids(self) -> set[str]:
        return {str(row["task_id"]) for row in self.lines()}

    def run_dirs(self) -> set[str]:
        return {str(row.get("run_dir")) for row in self.lines()}

    def latest(self) -> list[dict]:
        """The last line of each run folder: what a summary counts."""
        return latest_rows(self.lines(), "run_dir")

    def retried(self) -> int:
        """Run folders with more than one line (tasks run again by --retry-errors)."""
        counts: dict[str, int] = {}
        for row in self.lines():
            counts[str(row.get("run_dir"))] = counts.get(str(row.get("run_dir")), 0) + 1
        return sum(1 for n in counts.values() if n > 1)

    def append(self, line: dict) -> None:
        data = (redact(json.dumps(line, default=str)) + "\n").encode("utf-8")
        with self.lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)


def summary_exit_code(summary: dict, fail_on_error: float | None = None) -> int:
    """`exit_code` from a suite's summary.json (its `errors`, `unfinished` and `tasks`)."""
    errors = int(summary.get("errors") or 0) + int(summary.get("unfinished") or 0)
    total = int(summary.get("tasks") or 0) + int(summary.get("unfinished") or 0)
    rows = [{"status": "error"}] * errors + [{"status": "completed"}] * (total - errors)
    return exit_code(rows, fail_on_error)
