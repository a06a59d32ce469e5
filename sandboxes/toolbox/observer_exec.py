"""Run one command as the observer user with the right to read every file, and no way out.

The docker backend's observer (`stateact-observer`, its own uid) must read everything the agent
left, 0600 files and 0700 folders included, so it keeps one capability, CAP_DAC_READ_SEARCH (read
and search any file; no write). That capability also unlocks `open_by_handle_at`, which can open
files of the host's file system through a bind-mounted file (the "shocker" escape), so before the
command runs this installs a seccomp filter that refuses that call (and every call of a foreign
ABI). The agent's uid can neither trace, signal nor write into a process of another uid.

Standard library only: it runs inside the sandbox, started by `setpriv` (see docker_backend.py).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_EPERM = 0x00050000 | 1
X32_SYSCALL_BIT = 0x40000000
# (audit architecture, open_by_handle_at's number) per machine.
ARCHES = {"x86_64": (0xC000003E, 304), "aarch64": (0xC00000B7, 265)}


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def deny_handle_opening() -> None:
    """Refuse open_by_handle_at (and foreign ABIs) in this process and everything it starts."""
    arch, number = ARCHES[platform.machine()]
    load, jump_eq, jump_ge, ret = 0x20, 0x15, 0x35, 0x06
    program = b"".join(
        [
            _instruction(load, 4),  # the architecture
            _instruction(jump_eq, arch, 0, 4),
            _instruction(load, 0),  # the syscall number
            _instruction(jump_eq, number, 2, 0),
            _instruction(jump_ge, X32_SYSCALL_BIT, 1, 0),
            _instruction(ret, SECCOMP_RET_ALLOW),
            _instruction(ret, SECCOMP_RET_EPERM),
        ]
    )
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _Filter(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.exit("observer_exec: no command given")
    deny_handle_opening()
    try:
        os.execvp(args[0], args)
    except OSError as exc:
        sys.stderr.write(f"observer_exec: cannot run {args[0]!r}: {exc.strerror}\n")
        os._exit(127)
