"""Tells whether anything was drawn on the X screen since the last look (the DAMAGE extension),
and how much.

The desktop driver's settle wait grabs and hashes the whole screen to see whether it changed; a grab
costs 15-100 ms of CPU. With this watch it grabs only after the X server reported drawing, so a
quiet screen costs no grabs while the quiet spell runs. `wait_quiet` needs no grab at all: the
server's damage regions say how much was drawn, so a blinking text cursor does not count. Plain
ctypes over libX11, libXdamage and libXfixes.
"""

import ctypes
import select
import time

REPORT_NON_EMPTY = 3  # one event each time the damage region goes from empty to non-empty
DAMAGE_NOTIFY = 0  # the event's number relative to the extension's first event
XEVENT_LONGS = 24  # sizeof(XEvent) is 24 longs
# A window that has just shown is laid out once nothing but small drawings happened for QUIET_S:
# LibreOffice names its window after the document, paints the grid, and adds its toolbars 0.3-0.5 s
# later (measured), moving the grid. A drawing of at most SMALL_DRAWING_PX pixels (Writer's
# blinking text cursor, which never stops) does not count; CAP_S bounds the wait.
QUIET_S = 1.0
CAP_S = 10.0
SMALL_DRAWING_PX = 600


class XRectangle(ctypes.Structure):
    _fields_ = [
        ("x", ctypes.c_short),
        ("y", ctypes.c_short),
        ("width", ctypes.c_ushort),
        ("height", ctypes.c_ushort),
    ]


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
        fixes = ctypes.cdll.LoadLibrary("libXfixes.so.3")
        fixes.XFixesCreateRegion.restype = ctypes.c_ulong
        fixes.XFixesCreateRegion.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        fixes.XFixesFetchRegion.restype = ctypes.POINTER(XRectangle)
        fixes.XFixesFetchRegion.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.POINTER(ctypes.c_int),
        ]
        x11.XFree.argtypes = [ctypes.c_void_p]
        self._x11, self._damage, self._fixes = x11, damage, fixes
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
        self._parts = fixes.XFixesCreateRegion(self._display, None, 0)
        self.drawn()  # start from an empty region

    def wait(self, timeout_s: float) -> None:
        """Sleep until the X server sends something (a damage report) or `timeout_s` passes;
        call `drawn()` afterwards. Everything queued was read by the last `drawn()`, so the
        socket is where the next report arrives."""
        if timeout_s > 0:
            select.select([self._fd], [], [], timeout_s)

    def _reported(self) -> bool:
        """Read every queued event; whether one of them reported drawing."""
        self._x11.XFlush(self._display)
        seen = False
        while self._x11.XPending(self._display):
            self._x11.XNextEvent(self._display, ctypes.byref(self._event))
            if ctypes.cast(self._event, ctypes.POINTER(ctypes.c_int))[0] == self._notify:
                seen = True
        return seen

    def drawn(self) -> bool:
        """True if the screen was drawn on since the last call (the report is then reset)."""
        seen = self._reported()
        if seen:
            # Empty the region so the next drawing sends a new event; XSync makes sure the server
            # emptied it before the caller's grab, so drawing is either in that grab or reported.
            self._damage.XDamageSubtract(self._display, self._handle, 0, 0)
            self._x11.XSync(self._display, 0)
        return seen

    def drawn_area(self) -> int:
        """Pixels drawn on since the last look (0: nothing); the report is then reset."""
        if not self._reported():
            return 0
        self._damage.XDamageSubtract(self._display, self._handle, 0, self._parts)
        count = ctypes.c_int()
        rects = self._fixes.XFixesFetchRegion(self._display, self._parts, ctypes.byref(count))
        area = sum(rects[i].width * rects[i].height for i in range(count.value))
        if rects:
            self._x11.XFree(rects)
        return area


def wait_quiet(
    watch: DamageWatch,
    quiet_s: float = QUIET_S,
    cap_s: float = CAP_S,
    small_px: int = SMALL_DRAWING_PX,
) -> float:
    """Wait until nothing larger than `small_px` pixels was drawn for `quiet_s` (at most `cap_s`);
    the seconds waited. A drawing that small is a blinking text cursor or a clock, not a window
    being laid out."""
    began = time.monotonic()
    calm_since = began
    watch.drawn_area()
    while True:
        now = time.monotonic()
        left = min(calm_since + quiet_s, began + cap_s) - now
        if left <= 0:
            return now - began
        watch.wait(left)
        if watch.drawn_area() > small_px:
            calm_since = time.monotonic()
