"""The pointer moves and clicks of a GUI action, sent in-process through the XTEST extension.

The computer tool's most frequent commands are `mousemove --sync X Y` and `click BUTTON`; as
xdotool processes they cost a fork, an exec and a display connection each (10-60 ms apiece on a
loaded host), which was half of a click's round trip. These are the same XTEST requests xdotool
sends, on one connection kept open; every other command still goes to xdotool. Plain ctypes over
libX11 and libXtst (the desktop image has both: xdotool needs them).
"""

import ctypes
import re

NUMBER = re.compile(r"[0-9]{1,5}")


class Pointer:
    """One display connection for fake pointer input and pointer queries."""

    def __init__(self, display_name: str):
        x11 = ctypes.cdll.LoadLibrary("libX11.so.6")
        xtst = ctypes.cdll.LoadLibrary("libXtst.so.6")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XDefaultRootWindow.restype = ctypes.c_ulong
        x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        x11.XQueryPointer.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            *[ctypes.POINTER(ctypes.c_ulong)] * 2,
            *[ctypes.POINTER(ctypes.c_int)] * 4,
            ctypes.POINTER(ctypes.c_uint),
        ]
        xtst.XTestFakeMotionEvent.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_ulong,
        ]
        xtst.XTestFakeButtonEvent.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_ulong,
        ]
        self._x11, self._xtst = x11, xtst
        self._display = x11.XOpenDisplay(display_name.encode())
        if not self._display:
            raise OSError(f"cannot open display {display_name}")

    def position(self) -> tuple[int, int]:
        """Where the pointer is (XQueryPointer: one round trip, no process)."""
        window = ctypes.c_ulong()
        x, y, other = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        mask = ctypes.c_uint()
        self._x11.XQueryPointer(
            self._display,
            self._x11.XDefaultRootWindow(self._display),
            ctypes.byref(window),
            ctypes.byref(window),
            ctypes.byref(x),
            ctypes.byref(y),
            ctypes.byref(other),
            ctypes.byref(other),
            ctypes.byref(mask),
        )
        return x.value, y.value

    def perform(self, command: list[str]) -> bool:
        """Send `command` (xdotool's words) if it is a plain move or click; False for anything
        else (a window, a relative move, an option this does not know), which xdotool then runs.
        Returns once the X server has processed the input (XSync), as `--sync` promises."""
        plan = _move(command) or _click(command)
        if plan is None:
            return False
        for kind, *args in plan:
            if kind == "move":
                self._xtst.XTestFakeMotionEvent(self._display, -1, args[0], args[1], 0)
            else:
                self._xtst.XTestFakeButtonEvent(self._display, args[0], args[1], args[2])
        self._x11.XSync(self._display, 0)
        return True


def _move(command: list[str]) -> list | None:
    if command[0] != "mousemove":
        return None
    place = command[2:] if command[1:2] == ["--sync"] else command[1:]
    if len(place) != 2 or not all(NUMBER.fullmatch(v) for v in place):
        return None
    return [("move", int(place[0]), int(place[1]))]


def _click(command: list[str]) -> list | None:
    """`click [--repeat N] [--delay MS] BUTTON`: N presses and releases, MS apart."""
    if command[0] != "click" or len(command) < 2:
        return None
    options, button = command[1:-1], command[-1]
    settings = {"--repeat": "1", "--delay": "12"}  # xdotool's defaults
    while options:
        if len(options) < 2 or options[0] not in settings or not NUMBER.fullmatch(options[1]):
            return None
        settings[options[0]] = options[1]
        options = options[2:]
    if not NUMBER.fullmatch(button) or not 1 <= int(button) <= 9:
        return None
    repeat, delay = int(settings["--repeat"]), int(settings["--delay"])
    events = []
    for n in range(max(1, repeat)):
        # XTEST's delay is the wait before an event, in ms: the gap xdotool leaves between clicks.
        events += [("button", int(button), 1, delay if n else 0), ("button", int(button), 0, 0)]
    return events
