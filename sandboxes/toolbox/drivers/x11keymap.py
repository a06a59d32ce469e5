"""Keycodes for the characters a keyboard map lacks, bound for good before xdotool types them.

xdotool types a character missing from the keymap by binding it to a spare keycode for one
keystroke and unbinding it at once; GTK apps often read the keymap after the unbinding and drop the
character ("Zoë" arrives as "Zo"). So non-ASCII characters get a spare keycode that stays bound.
Plain ctypes over libX11.
"""

import os
import time

_keymap = {"display": None, "spare": [], "bound": {}}


def _x11():
    import ctypes

    lib = ctypes.cdll.LoadLibrary("libX11.so.6")
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XGetKeyboardMapping.restype = ctypes.POINTER(ctypes.c_ulong)
    lib.XGetKeyboardMapping.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ubyte,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int),
    ]
    lib.XChangeKeyboardMapping.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_ulong),
        ctypes.c_int,
    ]
    lib.XDisplayKeycodes.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int),
    ]
    lib.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.XFree.argtypes = [ctypes.c_void_p]
    return lib, ctypes


def bind_characters(text):
    """Give each non-ASCII character of `text` a keycode of its own, kept bound for xdotool."""
    wanted = [ch for ch in dict.fromkeys(text) if ord(ch) > 126 and ch not in _keymap["bound"]]
    if not wanted:
        return
    lib, ctypes = _x11()
    if _keymap["display"] is None:
        display = lib.XOpenDisplay(os.environ.get("DISPLAY", ":1").encode())
        if not display:
            return  # xdotool's own (racy) binding remains the fallback
        low, high, per = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        lib.XDisplayKeycodes(display, ctypes.byref(low), ctypes.byref(high))
        count = high.value - low.value + 1
        syms = lib.XGetKeyboardMapping(display, low.value, count, ctypes.byref(per))
        # Keep the last spare keycode free for xdotool's own scratch bindings.
        spare = [
            low.value + i
            for i in range(count)
            if not any(syms[i * per.value + j] for j in range(per.value))
        ]
        lib.XFree(syms)
        _keymap.update(display=display, spare=spare[:-1])
    display = _keymap["display"]
    for ch in wanted:
        if not _keymap["spare"]:  # reuse the keycode bound longest ago
            oldest = next(iter(_keymap["bound"]))
            _keymap["spare"].append(_keymap["bound"].pop(oldest))
        keycode = _keymap["spare"].pop(0)
        code = ord(ch)
        keysym = code if 0xA0 <= code <= 0xFF else 0x01000000 | code
        pair = (ctypes.c_ulong * 2)(keysym, keysym)
        lib.XChangeKeyboardMapping(display, keycode, 2, pair, 1)
        _keymap["bound"][ch] = keycode
    lib.XSync(display, 0)
    time.sleep(0.15)  # let clients handle the MappingNotify before the first keystroke
