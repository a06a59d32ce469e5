"""The desktop driver: runs INSIDE the sandbox, in its own persistent Python session.

It starts the virtual desktop (`stateact-desktop start`), drives it with xdotool and captures the
screen with Pillow (XCB, falling back to ImageMagick's `import`). Keeping one interpreter means one
RPC per action: run the xdotool commands, wait for the screen to settle, return the scaled PNG.
Only the sandbox's own Python and Pillow are used here; nothing from the host package.
"""

import base64
import hashlib
import io
import json
import os
import shlex
import subprocess
import time

from PIL import Image

MARKER = "@@STATEACT-RESULT@@ "
ENV_FILE = "/tmp/stateact-desktop.env"
UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}  # xdotool types non-ASCII only in a UTF-8 locale
LAUNCH_QUIET_S = (
    2.0  # the screen must stay unchanged this long before a launched app counts as ready
)
LAUNCH_SETTLE_CAP_S = 10.0
PAINTED_COLOURS = 300  # a blank window with its title bar shows ~150 colours, a painted Calc ~900
_grabber = {"kind": None}


class Refusal(Exception):
    """Bad input the model can fix; reported as a plain sentence."""


def _sa_call(name, args_json):
    try:
        reply = {"ok": True, "result": FUNCTIONS[name](**json.loads(args_json))}
    except Refusal as exc:
        reply = {"ok": False, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - every failure goes back as one line, never a crash
        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print(MARKER + json.dumps(reply))


# -- desktop ---------------------------------------------------------------------------------------
def start(width, height):
    began = time.monotonic()
    for attempt in range(3):
        done = subprocess.run(
            ["stateact-desktop", "start", f"{width}x{height}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode == 0:
            break
        # Seen under heavy host load: openbox failed to open a just-started Xvfb; start over.
        subprocess.run(["stateact-desktop", "stop"], capture_output=True, timeout=30)
        time.sleep(0.5 * (attempt + 1))
    if done.returncode != 0:
        raise Refusal(f"the desktop did not start: {(done.stderr or done.stdout).strip()[-400:]}")
    for line in open(ENV_FILE, encoding="utf-8"):
        line = line.strip()
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export ") :].partition("=")
            os.environ[key] = (shlex.split(value) or [""])[0]
    os.environ.update(UTF8)
    geometry = _xdotool(["getdisplaygeometry"]).split()
    return {
        "width": int(geometry[0]),
        "height": int(geometry[1]),
        "seconds": time.monotonic() - began,
    }


def _xdotool(args, timeout=30):
    done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=timeout)
    problem = done.stderr.strip()
    if "No such key name" in problem:
        name = problem.split("'")[1] if problem.count("'") >= 2 else problem
        raise Refusal(
            f"unknown key name {name!r}; use X keysyms such as Return, Escape, Tab, BackSpace, Delete, "
            "Up, Page_Down, F5, ctrl+s, shift+Tab, alt+F4."
        )
    if done.returncode != 0:
        raise Refusal(f"xdotool {' '.join(args[:2])} failed: {problem or done.stdout.strip()}")
    return done.stdout


# -- keyboard map ----------------------------------------------------------------------------------
# xdotool types a character missing from the keymap by binding it to a spare keycode for one
# keystroke and unbinding it at once; GTK apps often read the keymap after the unbinding and drop the
# character ("Zoë" arrives as "Zo"). So non-ASCII characters get a spare keycode that stays bound.
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


def _bind_characters(text):
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


# -- screen ----------------------------------------------------------------------------------------
def _grab():
    """The whole screen as an RGB image."""
    if _grabber["kind"] in (None, "pil"):
        try:
            from PIL import ImageGrab

            image = ImageGrab.grab(xdisplay=os.environ.get("DISPLAY"))
            _grabber["kind"] = "pil"
            return image.convert("RGB")
        except Exception:  # noqa: BLE001 - Pillow without XCB support: use ImageMagick instead
            if _grabber["kind"] == "pil":
                raise
            _grabber["kind"] = "import"
    data = subprocess.run(
        ["import", "-window", "root", "png:-"], capture_output=True, timeout=30
    ).stdout
    return Image.open(io.BytesIO(data)).convert("RGB")


def _settle(cap_s, quiet_s=0.25, poll_s=0.04):
    """Wait until the screen has not changed for `quiet_s` (at most `cap_s`); returns the last frame."""
    began = time.monotonic()
    frame = _grab()
    digest = hashlib.blake2b(frame.tobytes(), digest_size=16).digest()
    changed_at = began
    while time.monotonic() - began < cap_s:
        time.sleep(poll_s)
        frame = _grab()
        current = hashlib.blake2b(frame.tobytes(), digest_size=16).digest()
        now = time.monotonic()
        if current != digest:
            digest, changed_at = current, now
        elif now - changed_at >= quiet_s:
            break
    return frame


def _png(image, width, height):
    if image.size != (width, height):
        image = image.resize((width, height), Image.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return {
        "png_b64": base64.b64encode(buffer.getvalue()).decode("ascii"),
        "width": width,
        "height": height,
    }


def screenshot(width, height, settle_s=0.0):
    frame = _settle(settle_s) if settle_s > 0 else _grab()
    return _png(frame, width, height)


def act(commands, width, height, settle_s=2.0):
    """Run xdotool commands (`["sleep", s]` pauses), then return the settled screen."""
    for command in commands:
        if command[0] == "sleep":
            time.sleep(float(command[1]))
            continue
        if command[0] == "type":
            _bind_characters(command[-1])
        _xdotool(command)
    return screenshot(width, height, settle_s) if settle_s is not None else {}


def zoom(region, width, height):
    """The region (x0, y0, x1, y1 in screen pixels) enlarged to fit within width x height."""
    crop = _grab().crop(tuple(region))
    factor = min(width / crop.width, height / crop.height)
    size = (max(1, round(crop.width * factor)), max(1, round(crop.height * factor)))
    return _png(crop, *size)


def cursor():
    values = dict(line.split("=", 1) for line in _xdotool(["getmouselocation", "--shell"]).split())
    return {"x": int(values["X"]), "y": int(values["Y"])}


def launch(argv, window, timeout_s=60.0):
    """Start a program on the desktop; wait until a window named `window` shows and the screen settles."""
    began = time.monotonic()
    log = open(f"/tmp/stateact-launch-{os.path.basename(argv[0])}.log", "ab")
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    while True:
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", window], capture_output=True, text=True
        )
        if found.returncode == 0 and found.stdout.strip():
            break
        if time.monotonic() - began > timeout_s:
            raise Refusal(
                f"no window named {window!r} appeared within {timeout_s:g} s of starting {argv[0]}."
            )
        time.sleep(0.1)
    # A window is mapped blank and painted once its document loaded: wait for painted content
    # (a screen of more than a few colours), then for the screen to settle. LibreOffice paints the
    # grid first and its toolbars up to a second later (moving the grid), hence the long quiet spell.
    while _grab().reduce(4).getcolors(PAINTED_COLOURS) is not None:
        if time.monotonic() - began > timeout_s:
            raise Refusal(f"the {window!r} window stayed blank for {timeout_s:g} s.")
        time.sleep(0.1)
    # Capped: a blinking text cursor (Writer) never lets the screen settle completely.
    remaining = timeout_s - (time.monotonic() - began)
    _settle(min(LAUNCH_SETTLE_CAP_S, max(0.5, remaining)), quiet_s=LAUNCH_QUIET_S)
    return {"window": found.stdout.split()[0], "seconds": time.monotonic() - began}


def windows():
    listed = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True).stdout
    active = subprocess.run(
        ["xdotool", "getactivewindow", "getwindowname"], capture_output=True, text=True
    )
    return {"windows": listed, "active": active.stdout.strip() if active.returncode == 0 else ""}


FUNCTIONS = {
    "start": start,
    "screenshot": screenshot,
    "act": act,
    "zoom": zoom,
    "cursor": cursor,
    "launch": launch,
    "windows": windows,
}
