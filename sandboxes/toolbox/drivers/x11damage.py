"""Tells whether anything was drawn on the X screen since the last look (the DAMAGE extension).

The desktop driver's settle wait grabs and hashes the whole screen to see whether it changed; a grab
costs 15-100 ms of CPU. With this watch it grabs only after the X server reported drawing, so a
quiet screen costs no grabs while the quiet spell runs. Plain ctypes over libX11 and libXdamage.
"""

import ctypes
import select

REPORT_NON_EMPTY = 3  # one event each time the damage region goes from empty to non-empty
DAMAGE_NOTIFY = 0  # the event's number relative to the extension's first event
XEVENT_LONGS = 24  # sizeof(XEvent) is 24 longs


class DamageWatch:
    """Damage on the root window (which includes what its child windows draw) of one display."""

    def __init__(self, display_name: str):
        x11 = ctypes.cdll.LoadLibrary("libX11.so.6")
        damage = ctypes.cdll.LoadLibrary("libXdamage.so.1")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XDefaultRootWindow.restype = ctypes.c_ulong
        x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        for name in ("XPending", "XFlush", "XConnectionNumber"):
            getattr(x11, name).argtypes = [ctypes.c_void_p]
        x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        x11.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        damage.XDamageQueryExtension.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_int),
        ]
        damage.XDamageCreate.restype = ctypes.c_ulong
        damage.XDamageCreate.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]
        damage.XDamageSubtract.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.c_ulong,
            ctypes.c_ulong,
        ]
        self._x11, self._damage = x11, damage
        self._display = x11.XOpenDisplay(display_name.encode())
        if not self._display:
            raise OSError(f"cannot open display {display_name}")
        event_base, error_base = ctypes.c_int(), ctypes.c_int()
        if not damage.XDamageQueryExtension(
            self._display, ctypes.byref(event_base), ctypes.byref(error_base)
        ):
            raise OSError("the X server has no DAMAGE extension")
        self._notify = event_base.value + DAMAGE_NOTIFY
        root = x11.XDefaultRootWindow(self._display)
        self._handle = damage.XDamageCreate(self._display, root, REPORT_NON_EMPTY)
        self._event = (ctypes.c_long * XEVENT_LONGS)()
        self._fd = x11.XConnectionNumber(self._display)
        self.drawn()  # start from an empty region

    def wait(self, timeout_s: float) -> None:
        """Sleep until the X server sends something (a damage report) or `timeout_s` passes;
        call `drawn()` afterwards. Everything queued was read by the last `drawn()`, so the
        socket is where the next report arrives."""
        if timeout_s > 0:
            select.select([self._fd], [], [], timeout_s)

    def drawn(self) -> bool:
        """True if the screen was drawn on since the last call (the report is then reset)."""
        self._x11.XFlush(self._display)
        seen = False
        while self._x11.XPending(self._display):
            self._x11.XNextEvent(self._display, ctypes.byref(self._event))
            if ctypes.cast(self._event, ctypes.POINTER(ctypes.c_int))[0] == self._notify:
                seen = True
        if seen:
            # Empty the region so the next drawing sends a new event; XSync makes sure the server
            # emptied it before the caller's grab, so drawing is either in that grab or reported.
            self._damage.XDamageSubtract(self._display, self._handle, 0, 0)
            self._x11.XSync(self._display, 0)
        return seen
