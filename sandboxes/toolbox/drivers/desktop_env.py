"""Where the running desktop is: its X display and session bus, from the file `stateact-desktop
start` writes. That file lives in /tmp, where the agent can write, so only a display name and a
D-Bus address of the expected shape are taken from it. Standard library only: the toolbox reads it
too."""

import re

ENV_FILE = "/tmp/stateact-desktop.env"
ENV_SHAPES = {
    "DISPLAY": re.compile(r":[0-9]{1,3}"),
    "DBUS_SESSION_BUS_ADDRESS": re.compile(r"unix:[A-Za-z0-9=/,._-]{1,200}"),
}


class NoDesktop(Exception):
    """No desktop runs (or its file names no display); the message says which."""


def desktop_env(path: str = ENV_FILE) -> dict[str, str]:
    """DISPLAY (always) and DBUS_SESSION_BUS_ADDRESS (if well formed) of the running desktop."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read(4096).splitlines()
    except OSError:
        raise NoDesktop("the desktop is not running; start it first.") from None
    found = {}
    for line in lines:
        key, _, value = line.strip().removeprefix("export ").partition("=")
        value = value.strip().strip("'\"")
        if key in ENV_SHAPES and ENV_SHAPES[key].fullmatch(value):
            found[key] = value
    if "DISPLAY" not in found:
        raise NoDesktop(f"{path} names no display; restart the desktop.")
    return found
