"""The observer flavour: how the harness runs anything that only LOOKS at a sandbox's state.

The agent owns everything it can write (its home, /tmp, rc files, `~/.local`), so whatever the
harness runs to observe state (the toolbox itself, the gate's sessions, getters, probes, setup and
postconfig commands) must not read configuration from there:
- python runs isolated: `-I` where the harness starts it, and `PYTHONSAFEPATH` + `PYTHONNOUSERSITE`
  in the environment for pythons started by commands (no current folder, script folder or user
  site on sys.path, so `~/openpyxl.py`, `~/toolbox/`, `usercustomize` and `.pth` files never load);
- bash starts without rc or profile files, with a fixed PATH of root-owned folders and an
  environment built here (no BASH_ENV or ENV, no exported functions, no PYTHON* variables).

This module is standard library only: the toolbox imports it inside the sandbox and the backends on
the host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

OBSERVER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Variables that make an interpreter or shell load code from somewhere: never passed to an observer.
_LOADING_VARIABLE = re.compile(
    r"^(PYTHON.*|BASH_ENV|ENV|BASH_FUNC_.*|LD_.*|PERL5?LIB|PERL5OPT|RUBYLIB|RUBYOPT|NODE_OPTIONS"
    r"|NODE_PATH|PATH|CDPATH|GLOBIGNORE|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|TMPDIR"
    r"|GIT_.*|LESS.*|INPUTRC)$"
)
SYSTEM_MAGIC = "/usr/lib/file/magic.mgc"
"""Debian's compiled magic database (package libmagic-mgc), what `file` reads without ~/.magic."""
_PYTHON = re.compile(r"python(3(\.\d+)?)?")
_BASH = re.compile(r"bash")


def observer_env(trusted: Mapping[str, str]) -> dict[str, str]:
    """The environment for an observer process, from the harness's own (never the agent's) one."""
    env = {key: value for key, value in trusted.items() if not _LOADING_VARIABLE.match(key)}
    env.update(
        PATH=OBSERVER_PATH,
        PYTHONSAFEPATH="1",
        PYTHONNOUSERSITE="1",
        PYTHONDONTWRITEBYTECODE="1",
        TERM="dumb",
        PAGER="cat",
        GIT_PAGER="cat",
        MANPAGER="cat",
        # git and less read configuration from home; git's repository config can run programs
        # (core.fsmonitor, hooks). Attribute drivers (textconv, filters) still apply: see README.
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_COUNT="3",
        GIT_CONFIG_KEY_0="core.fsmonitor",
        GIT_CONFIG_VALUE_0="false",
        GIT_CONFIG_KEY_1="core.hooksPath",
        GIT_CONFIG_VALUE_1="/dev/null",
        GIT_CONFIG_KEY_2="core.pager",
        GIT_CONFIG_VALUE_2="cat",
        LESSKEY="/dev/null",
        LESSKEYIN="/dev/null",
        LESSHISTFILE="-",
        # `file` reads ~/.magic before the system's magic unless MAGIC names a file.
        MAGIC=SYSTEM_MAGIC,
        # sqlite3 runs ~/.sqliterc unless -init names another file; for shells and `bash -c`.
        **{"BASH_FUNC_sqlite3%%": '() { command sqlite3 -init /dev/null "$@"; }'},
    )
    return env


def observer_argv(argv: list[str]) -> list[str]:
    """`argv` with the flags that isolate a python (`-I`), a bash (no rc or profile files) or a
    sqlite3 (no ~/.sqliterc)."""
    if not argv:
        return argv
    program = os.path.basename(argv[0])
    if program == "sqlite3" and "-init" not in argv[1:]:
        return [argv[0], "-init", "/dev/null", *argv[1:]]
    if _PYTHON.fullmatch(program) and "-I" not in argv[1:2]:
        return [argv[0], "-I", *argv[1:]]
    if _BASH.fullmatch(program):
        return [argv[0], "--norc", "--noprofile", *argv[1:]]
    return list(argv)


# `stateact-desktop start` writes these two lines to an agent-writable file; an observer takes only
# values of this exact form from it and never sources it.
DESKTOP_ENV_FILE = "/tmp/stateact-desktop.env"
DESKTOP_VARIABLES = (
    r"^export DISPLAY=:[0-9]+$",
    r"^export DBUS_SESSION_BUS_ADDRESS='unix:[A-Za-z0-9=,/._-]+'$",
)
SAFE_DESKTOP_ENV = (
    f"[ -f {DESKTOP_ENV_FILE} ] && eval \"$(grep -E -x -e '{DESKTOP_VARIABLES[0][1:-1]}' "
    f'-e "{DESKTOP_VARIABLES[1][1:-1]}" {DESKTOP_ENV_FILE})"; '
)
"""Shell code that exports DISPLAY and the D-Bus address from the desktop's file, checked."""
