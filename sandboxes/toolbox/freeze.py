"""Freeze the agent: stop every process of its uid at once, keep only what the harness must ask.

Judging starts when the agent stops. `kill(-1, SIGSTOP)` sent *as the agent's uid* reaches every
process that uid may signal in one pass of the kernel (it signals under the task-list lock, and a
fork in flight when the signal lands is restarted so its child is stopped too), so a leftover loop,
a watcher waiting for the harness's commands or a fork bomb cannot slip out of it. A stopped
process cannot write a file, signal, trace or fork; what it is can then be read from /proc at
leisure, with nothing of the agent running.

Kept (resumed) after the stop:
- the toolbox (`keep` pids): the harness's own server, non-dumpable, serving the gate's listing;
- the desktop session and the task's applications that postconfig steps and getters talk to, as
  OSWorld's postconfig does (saving with ctrl+s, Chrome's DevTools, the session bus). A process is
  one of them only when its program is one of `KEPT_PROGRAMS` (root-owned binaries under /usr), no
  tracer is attached to it, and every executable mapping it has is a root-owned file under /usr:
  a program the agent started with LD_PRELOAD, its own libraries or a debugger attached is not.
Everything else stays stopped; `end` kills it (the agent's part is over for good).

Standard library only: the docker backend runs `main()` as root in the container
(`freeze_as_root`), the local backend's toolbox (the agent's uid, no root there) calls `freeze()`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

AGENT_UID = 1000
SETTLE_S = 3.0
KEPT_PROGRAMS = frozenset(
    {
        "/usr/bin/Xvfb",
        "/usr/bin/openbox",
        "/usr/bin/dbus-daemon",
        "/usr/libexec/at-spi-bus-launcher",
        "/usr/libexec/at-spi2-registryd",
        "/usr/libexec/dconf-service",
        "/usr/libexec/gnome-terminal-server",
        "/usr/lib/libreoffice/program/soffice.bin",
        "/usr/lib/libreoffice/program/oosplash",
        "/usr/lib/chromium/chromium",
        "/usr/lib/chromium/chrome",  # the same binary under Chrome's name (desktop Dockerfile)
        "/usr/lib/chromium/chrome_crashpad_handler",
        "/usr/bin/vlc",
        "/usr/bin/pulseaudio",  # the sound server whose volume OSWorld's checks read
        "/usr/lib/thunderbird/thunderbird",
        "/usr/lib/thunderbird/thunderbird-bin",
        "/usr/bin/gimp-2.10",
    }
)
"""The desktop session's and the OSWorld applications' programs (realpaths in the desktop image)."""
TRUSTED_CODE_ROOTS = ("/usr/",)
STOPPED_STATES = {"T", "t", "Z", "X"}


def _stat_fields(pid: str) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first), or None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            text = handle.read()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()


def processes(uid: int) -> dict[str, tuple[str, str]]:
    """{pid: (state, start time)} of every process whose real or saved uid is `uid` (the ones a
    process of that uid may signal)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as handle:
                uids = next(line for line in handle if line.startswith("Uid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if str(uid) not in (uids[0], uids[2]):
            continue
        fields = _stat_fields(pid)
        if fields:
            found[pid] = (fields[0], fields[19])
    return found


def _tracer(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next(line for line in handle if line.startswith("TracerPid:")).split()[1]
    except (OSError, StopIteration):
        return "?"


def _trusted_file(path: str) -> bool:
    if not path.startswith(TRUSTED_CODE_ROOTS) or path.endswith(" (deleted)"):
        return False
    try:
        info = os.stat(path)
    except OSError:
        return False
    return info.st_uid == 0 and not info.st_mode & 0o022


def refusal(pid: str) -> str | None:
    """Why `pid` may not run on while the harness judges (None: it is a task application)."""
    try:
        program = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/maps") as handle:
            maps = handle.read().splitlines()
    except OSError:
        return "its program cannot be read"
    if program not in KEPT_PROGRAMS or not _trusted_file(program):
        return f"{program} is not a task application"
    if _tracer(pid) != "0":
        return "a debugger is attached to it"
    for line in maps:
        parts = line.split(None, 5)
        if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
            if not _trusted_file(parts[5]):
                return f"it runs code from {parts[5]}"
    return None


def stop_each(uid: int) -> None:
    """Stop `uid`'s processes one by one until a whole pass finds none running (what root does
    first: it may signal them but must not reach root's own processes with kill(-1)); a stopped
    process cannot fork, so each pass leaves fewer to find."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        running = [p for p, (state, _) in processes(uid).items() if state not in STOPPED_STATES]
        running = [p for p in running if p != str(os.getpid())]
        if not running:
            return
        for pid in running:
            _signal(pid, signal.SIGSTOP)
        time.sleep(0.01)


def freeze(
    uid: int = AGENT_UID, keep: tuple[str, ...] = (), end: bool = False, before=None
) -> dict:
    """Stop `uid`'s processes, resume the kept ones, kill the rest when `end`; what was done.

    Runs as `uid` (it must read the processes' /proc entries, which root without CAP_SYS_PTRACE
    may not): kill(-1) then leaves out only this process."""
    before = processes(uid) if before is None else before
    try:
        os.kill(-1, signal.SIGSTOP)
    except ProcessLookupError:
        pass  # no process of the uid but this one: nothing to stop
    stop_each(uid)
    frozen, kept, refused = [], [], {}
    for pid, (state, start) in sorted(processes(uid).items(), key=lambda item: int(item[0])):
        if pid == str(os.getpid()) or state in {"Z", "X"}:
            continue
        reason = None if pid in keep else refusal(pid)
        if reason is None:
            kept.append(pid)
            _signal(pid, signal.SIGCONT)
            continue
        refused[pid] = reason
        if not (pid in before and before[pid][0] in {"T", "t"}):
            frozen.append({"pid": pid, "start": start})  # stopped by us: thaw may resume it
        if end:
            _signal(pid, signal.SIGKILL)
    return {"frozen": frozen, "kept": kept, "refused": refused, "ended": end}


def freeze_as_root(uid: int, keep: tuple[str, ...], end: bool) -> dict:
    """Root's way: stop the agent's processes one by one (root can signal them, and none of them
    can signal root), then hand the rest to a child that becomes `uid`: with nothing of the agent
    left running, no one can stop or trace that child before its own kill(-1)."""
    before = processes(uid)
    stop_each(uid)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)  # this clears `dumpable`: no process of uid may attach
            os.write(write_end, json.dumps(freeze(uid, keep, end, before)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(child, 0)
    return json.loads(b"".join(chunks) or b"null") or {"error": "the freezing child failed"}


def thaw(frozen: list[dict]) -> int:
    """Resume the processes `freeze` stopped (those still there with the same start time)."""
    resumed = 0
    for entry in frozen:
        fields = _stat_fields(str(entry["pid"]))
        if fields and fields[19] == str(entry["start"]) and fields[0] in {"T", "t"}:
            resumed += _signal(str(entry["pid"]), signal.SIGCONT)
    return resumed


def _signal(pid: str, sig: int) -> int:
    try:
        os.kill(int(pid), sig)
    except OSError:
        return 0
    return 1


def main(argv: list[str] | None = None) -> None:
    """`freeze [--end] [PID…]` or `thaw JSON`: prints the JSON result on one line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["thaw"]:
        print(json.dumps({"resumed": thaw(json.loads(args[1]))}))
        return
    end = "--end" in args
    keep = tuple(a for a in args[1:] if a.isdigit())
    if os.getuid() == 0:
        print(json.dumps(freeze_as_root(AGENT_UID, keep, end)))
    else:
        print(json.dumps(freeze(AGENT_UID, keep, end)))
