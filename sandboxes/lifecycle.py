"""Every sandbox is cleaned up: on close, at interpreter exit, on SIGINT/SIGTERM, and after a crash.

Live sandboxes are kept in a registry that an atexit hook and the signal handlers empty. A sandbox
that outlives its process (kill -9) carries an owner label, `<host>:<pid>:<start time>`; the next
StateAct process removes it once that owner is gone, and only then, so parallel runs never reap
each other.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import threading
import weakref

log = logging.getLogger(__name__)

_live: weakref.WeakSet = weakref.WeakSet()
_lock = threading.Lock()
_installed = False


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, which tells a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after its closing paren.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_label() -> str:
    """This process's identity as recorded on the sandboxes it starts."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def owner_is_gone(label: str, created_at: float | None = None) -> bool:
    """True when the process that started a sandbox no longer runs (on this host), or, for a
    snapshot kept for a run's resume (`run:<run dir>`), when that run directory is gone or
    finished. A result.json older than the snapshot (`created_at`) is a previous attempt's: the
    run that made the snapshot is still going."""
    if label.startswith("run:"):
        run_dir = label[len("run:") :]
        if not os.path.isdir(run_dir):
            return True
        try:
            finished_at = os.stat(os.path.join(run_dir, "result.json")).st_mtime
        except OSError:
            return False
        return created_at is None or finished_at >= created_at
    try:
        host, pid, started = label.rsplit(":", 2)
        pid_number = int(pid)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False
    return _start_time(pid_number) != started


def register(sandbox) -> None:
    with _lock:
        _live.add(sandbox)
    _install_hooks()


def unregister(sandbox) -> None:
    with _lock:
        _live.discard(sandbox)


def close_all() -> None:
    with _lock:
        sandboxes = list(_live)
    for sandbox in sandboxes:
        try:
            sandbox.close()
        except Exception as exc:  # cleanup must go on for the others
            log.warning("could not close sandbox %s: %s", getattr(sandbox, "id", "?"), exc)


def _install_hooks() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        signal.signal(signum, _make_handler(signum, previous))


def _make_handler(signum: int, previous):
    def handler(received, frame):
        close_all()
        if callable(previous):
            previous(received, frame)
        elif previous == signal.SIG_IGN:
            return
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            raise SystemExit(128 + signum)

    return handler
