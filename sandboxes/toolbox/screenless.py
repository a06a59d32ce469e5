"""Agent sessions without the screen: the display belongs to the GUI specialist.

The desktop's X display and accessibility bus listen only on abstract Unix sockets
(the desktop image's `stateact-desktop.sh` and bus configurations). A session started through this
module runs in a Landlock domain (Linux 6.12 and later) that scopes abstract Unix sockets: nothing
in it, nor anything it starts, can connect to an abstract socket made outside it. So the agent's
bash and Python reach no screen, whatever DISPLAY they set, the desktop's env file they read or the
socket names /proc/net/unix shows, while the harness's own desktop driver, the applications and the
checkers keep it. Signals are not scoped: the agent may still close an application that holds a
file it changed.

Run as a program (`python3 -I screenless.py -- ARGV…`) it restricts itself, then executes ARGV;
it refuses to run ARGV unrestricted. Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import sys

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPING_ABI = 6
PR_SET_NO_NEW_PRIVS = 38


class RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is off or absent."""
    version = _libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, int(version))


def why_unavailable() -> str | None:
    """None when sessions can be kept off the screen here, else why not (one sentence)."""
    abi = landlock_abi()
    if abi < SCOPING_ABI:
        return (
            f"this kernel's Landlock (ABI {abi}) cannot scope abstract sockets (ABI "
            f"{SCOPING_ABI}, Linux 6.12+ is needed)"
        )
    return None


def restrict_self() -> None:
    """Enter a Landlock domain that scopes abstract Unix sockets; OSError if the kernel refuses."""
    libc = _libc()
    attr = RulesetAttr(0, 0, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
    fd = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(fd)


def wrapped(argv: list[str]) -> list[str]:
    """`argv` as a command line that runs it without the screen."""
    return [sys.executable, "-I", os.path.abspath(__file__), "--", *argv]


def main() -> None:
    args = sys.argv[1:]
    if not args or args[0] != "--" or len(args) < 2:
        sys.exit("usage: screenless.py -- PROGRAM [ARG…]")
    try:
        restrict_self()
    except OSError as exc:
        sys.exit(f"screenless: not starting {args[1]} with the screen reachable: {exc}")
    os.execv(args[1], args[1:])


if __name__ == "__main__":
    main()
