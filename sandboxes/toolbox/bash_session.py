"""A persistent bash session on a pty, with exact completion detection, exit code and cwd per
command.

How a command runs: the shell gets ONE short line that prints a start marker (`__sa_b`), `eval`s
the command (quoted inline, or read with the `read` builtin from a private file when long) and
restores the sentinel (`__sa_a`). After every command bash runs PROMPT_COMMAND, which prints an end
sentinel carrying `$?` and `$PWD`. Output is what lies between the two markers, so the exit code
and cwd come back in the same round trip, multi-line commands and heredocs behave as typed, and no
command is limited by the tty's 4 kB line length. The markers are printed through printf
arguments, so even if echo comes back on, the echoed command line never contains the literal
marker."""

from __future__ import annotations

import os
import re
import secrets
import select
import signal
import time
from dataclasses import dataclass

import pexpect

from .observer import observer_env
from .output import BoundedOutput
from .screenless import wrapped

READ_CHUNK = 65536
INTERRUPT_WAIT_S = 1.0
START_WAIT_S = 10.0
MAX_INLINE_BYTES = 3000
_ANSI_C_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t"}


def ansi_c_quote(text: str) -> str:
    """`text` as a bash $'...' literal in which no byte is special to the tty's line editing."""
    parts = []
    for char in text:
        if char in _ANSI_C_ESCAPES:
            parts.append(_ANSI_C_ESCAPES[char])
        elif char < " " or char == "\x7f":
            parts.append(f"\\x{ord(char):02x}")
        else:
            parts.append(char)
    return "$'" + "".join(parts) + "'"


@dataclass
class BashResult:
    """What one command produced."""

    output: str
    exit_code: int | None
    cwd: str
    timed_out: bool
    truncated_chars: int

    def as_dict(self) -> dict:
        return {
            "output": self.output,
            "exit_code": self.exit_code,
            "cwd": self.cwd,
            "timed_out": self.timed_out,
            "truncated_chars": self.truncated_chars,
        }


GATE_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate_site")
GIT_GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "git_guard.py")
"""An observer's `git` runs no driver the repository's config names (git_guard.py)."""


class ShellExited(Exception):
    """The shell's pty closed: it exited or was killed."""


def child_environment(observer: bool = False, local_imports: bool = False) -> dict[str, str]:
    """The environment for processes the toolbox starts: its own, minus its import path, plus no
    pagers; an observer's is the fixed one of `observer.observer_env`. `local_imports`: an
    observer's python also imports modules from its current folder, as in a normal shell (the gate
    model runs the agent's code that way), but after the installed libraries (gate_site/)."""
    if observer:
        env = observer_env(os.environ)
        env["BASH_FUNC_git%%"] = f'() {{ /usr/bin/python3 -I {GIT_GUARD} "$@"; }}'
        if local_imports:
            env["PYTHONPATH"] = GATE_SITE
        return env
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and os.path.abspath(p) != package_parent
    ]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        env.pop("PYTHONPATH", None)
    env.update(TERM="dumb", PAGER="cat", GIT_PAGER="cat", MANPAGER="cat", SYSTEMD_PAGER="")
    env.pop("HISTFILE", None)
    return env


class BashSession:
    """One persistent interactive bash; `run` executes a command and waits for its sentinel."""

    def __init__(
        self,
        name: str,
        workdir: str,
        observer: bool = False,
        screenless: bool = False,
        local_imports: bool = False,
    ):
        self.name = name
        self.observer = observer
        self.screenless = screenless  # no X display or session bus (screenless.py)
        self.local_imports = local_imports  # the gate model's python imports its folder
        self._workdir = workdir
        self._token = secrets.token_hex(6)
        self._end_prefix = f"__SA{self._token}_E_".encode()
        self._end_re = re.compile(
            rb"__SA" + self._token.encode() + rb"_E_(\d+)_(.*?)__SA_END\r?\n", re.S
        )
        self._command_file = os.path.join(workdir, f"bash-{self._token}.cmd")
        self._counter = 0
        self._leftover = b""  # bytes read past the last marker, not yet consumed
        self.cwd = os.path.expanduser("~")
        self.child: pexpect.spawn | None = None
        self._pending_note = ""
        self._start()

    # -- lifecycle -----------------------------------------------------------------------------
    def _start(self) -> None:
        home = os.path.expanduser("~")
        start_dir = home if os.path.isdir(home) else "/"
        argv = ["/bin/bash", "--noprofile", "--norc", "--noediting", "-i"]
        if self.screenless:
            argv = wrapped(argv)
        self.child = pexpect.spawn(
            argv[0],
            argv[1:],
            echo=False,
            env=child_environment(self.observer, self.local_imports),
            cwd=start_dir,
            dimensions=(50, 250),
            encoding=None,
        )
        # pexpect's default 50 ms pause before every send would dominate the round trip.
        self.child.delaybeforesend = None
        self._poller = select.poll()
        self._poller.register(self.child.child_fd, select.POLLIN)
        # Each command's line stays short through two functions defined here: every byte of a
        # line costs time in the tty and in bash (100 bytes, 16 us), and the 170 bytes it had
        # inline were a quarter of the session's round trip. `__sa_b N` keeps $?, prints start
        # marker N and gives $? back for the command to see; `__sa_a` puts the sentinel back in
        # case the command replaced PROMPT_COMMAND (a sourced rc file) and returns the command's
        # status for the sentinel.
        setup = (
            "unset HISTFILE; set +o history; set +H; PS1=''; PS2=''; __sa_rc() { return $1; }; "
            f"__sa_b() {{ __sa_k=$?; printf '__SA{self._token}_S%s__' \"$1\"; "
            "return $__sa_k; }; "
            "__sa_a() { __sa_k=$?; PROMPT_COMMAND=$__sa_pc; return $__sa_k; }; "
            '__sa_pc=\'__sa_k=$?; printf "__SA%s_E_%s_%s__SA_END\\n" '
            f'{self._token} "$__sa_k" "$PWD"\'; PROMPT_COMMAND=$__sa_pc\n'
        )
        self.child.send(setup.encode())
        self.cwd = start_dir
        self._leftover = b""
        try:
            end = self._read_until_end(BoundedOutput(0), time.monotonic() + START_WAIT_S)
        except ShellExited:
            end = None
        if end is None:
            self.close()
            raise RuntimeError("bash did not print its first prompt within 10 s")

    def alive(self) -> bool:
        """Whether bash still runs, in one syscall that reaps nothing (pexpect's isalive takes two
        and is checked before every command); pexpect reaps it later as before."""
        if self.child is None:
            return False
        try:
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            return os.waitid(os.P_PID, self.child.pid, flags) is None
        except ChildProcessError:  # pexpect reaped it already
            return False

    def close(self) -> None:
        """Stop the shell and, through the pty hangup, its jobs."""
        if self.child is not None:
            try:
                self.child.close(force=True)
            except Exception:  # noqa: BLE001 - a half-dead child must not stop the cleanup
                pass
            self.child = None
        try:
            os.unlink(self._command_file)
        except OSError:
            pass

    def restart(self) -> None:
        self.close()
        self._start()

    # -- running commands ----------------------------------------------------------------------
    def run(self, command: str, timeout: float, max_output: int) -> BashResult:
        note = self._ensure_alive()
        self._counter += 1
        start_marker = f"__SA{self._token}_S{self._counter}__".encode()
        line = f"__sa_b {self._counter}; {self._load_command(command)}; __sa_a\n"
        collector = BoundedOutput(max_output)
        deadline = time.monotonic() + timeout
        try:
            self.child.send(line.encode("utf-8", errors="replace"))
            if not self._skip_until(start_marker, deadline):
                return self._after_timeout(collector, timeout, note)
            end = self._read_until_end(collector, deadline)
        except ShellExited:
            return self._after_exit(collector, note)
        if end is None:
            return self._after_timeout(collector, timeout, note)
        exit_code, self.cwd = end
        output, cut = collector.finish()
        return BashResult(note + output, exit_code, self.cwd, False, cut)

    def _load_command(self, command: str) -> str:
        """Shell code that runs `command` (as `eval` does, so it sees the previous `$?`).

        Short commands travel inline; long ones through a file, because a tty in canonical mode
        cuts input lines at 4 kB (and the file write costs more than the inline form).
        """
        command = command.replace("\0", "")
        quoted = ansi_c_quote(command)
        if len(quoted.encode("utf-8", errors="replace")) < MAX_INLINE_BYTES:
            return f"eval {quoted}"
        os.makedirs(os.path.dirname(self._command_file), exist_ok=True)
        with open(self._command_file, "w", encoding="utf-8", errors="replace") as f:
            f.write(command)
        # The read's own status is dropped, so the command still sees the previous one.
        read = f"IFS= read -r -d '' __sa_cmd < {self._command_file}"
        return f'{read}; __sa_rc $__sa_k; eval "$__sa_cmd"'

    def interrupt(self) -> str:
        """Send Ctrl-C and return whatever the shell prints until its next prompt (up to 1 s)."""
        if not self.alive():
            return ""
        collector = BoundedOutput(30000)
        self.child.sendintr()
        try:
            self._read_until_end(collector, time.monotonic() + INTERRUPT_WAIT_S)
        except ShellExited:
            pass
        return collector.finish()[0]

    def _ensure_alive(self) -> str:
        if self.alive():
            return ""
        note = self._pending_note or "[the previous bash session had ended; "
        self._pending_note = ""
        self.restart()
        return f"{note}this command ran in a fresh session, restarted in {self.cwd}]\n"

    def _after_exit(self, collector: BoundedOutput, note: str) -> BashResult:
        status = None
        if self.child is not None:
            self.child.close(force=True)
            status = (
                self.child.exitstatus
                if self.child.exitstatus is not None
                else self.child.signalstatus
            )
        self.child = None
        self._pending_note = "[the previous bash session exited; "
        output, cut = collector.finish()
        message = (
            f"\nbash has exited with returncode {status}; the next command starts a fresh session."
        )
        return BashResult(note + output + message, status, self.cwd, False, cut)

    def _after_timeout(self, collector: BoundedOutput, timeout: float, note: str) -> BashResult:
        """Interrupt the running command, escalating until the shell answers again, and report
        it."""
        how = self._interrupt_until_prompt(collector)
        output, cut = collector.finish()
        # Worded as Anthropic's reference bash tool words it, then what happened instead of
        # "must be restarted": the shell was brought back.
        message = f"timed out: bash has not returned in {float(timeout)} seconds; {how}."
        # Ctrl-C leaves blank lines behind; the sentence goes right under the partial output.
        text = note + output.rstrip("\n")
        return BashResult(f"{text}\n{message}" if text else message, None, self.cwd, True, cut)

    def _interrupt_until_prompt(self, collector: BoundedOutput) -> str:
        try:
            for attempt in range(3):
                self.child.sendintr()
                wait = INTERRUPT_WAIT_S if attempt == 0 else INTERRUPT_WAIT_S / 2
                end = self._read_until_end(collector, time.monotonic() + wait)
                if end is not None:
                    self.cwd = end[1]
                    return "the command was interrupted (Ctrl-C) and the shell is ready again"
            group = os.tcgetpgrp(self.child.child_fd)
            if group != os.getpgid(self.child.pid):
                os.killpg(group, signal.SIGKILL)
                end = self._read_until_end(collector, time.monotonic() + INTERRUPT_WAIT_S)
                if end is not None:
                    self.cwd = end[1]
                    return (
                        "Ctrl-C did not stop the command, so its process group was killed; "
                        "the shell is ready again"
                    )
        except (ShellExited, OSError):
            pass
        self.restart()
        return f"the shell did not answer Ctrl-C, so it was restarted in {self.cwd}"

    # -- reading the pty -----------------------------------------------------------------------
    def _read_chunk(self, deadline: float) -> bytes | None:
        """Next chunk of pty output, or None when the deadline passes first."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        # poll, not select: a toolbox of the local backend may hold descriptors past 1024.
        if not self._poller.poll(remaining * 1000):
            return None
        try:
            data = os.read(self.child.child_fd, READ_CHUNK)
        except OSError as exc:  # Linux reports a closed pty as EIO
            raise ShellExited() from exc
        if not data:
            raise ShellExited()
        return data

    def _skip_until(self, marker: bytes, deadline: float) -> bool:
        """Discard output up to and including `marker` (echo, leftovers of earlier commands)."""
        window, self._leftover = self._leftover, b""
        while True:
            found = window.find(marker)
            if found != -1:
                self._leftover = window[found + len(marker) :]
                return True
            window = window[-len(marker) :]
            data = self._read_chunk(deadline)
            if data is None:
                return False
            window += data

    def _read_until_end(self, collector: BoundedOutput, deadline: float) -> tuple[int, str] | None:
        """Feed output to `collector` until the end sentinel; returns (exit code, cwd) or None on
        timeout."""
        pending, self._leftover = self._leftover, b""
        keep = len(self._end_prefix) - 1
        while True:
            found = pending.find(self._end_prefix)
            if found != -1:
                collector.feed(pending[:found])
                pending = pending[found:]
                match = self._end_re.match(pending)
                if match:
                    self._leftover = pending[match.end() :]
                    cwd = match.group(2).decode("utf-8", errors="replace")
                    return int(match.group(1)), cwd
            elif len(pending) > keep:
                collector.feed(pending[:-keep])
                pending = pending[-keep:]
            data = self._read_chunk(deadline)
            if data is None:
                collector.feed(pending)
                return None
            pending += data
