"""The desktop driver: runs INSIDE the sandbox, in its own process (see ../driver_process.py).

It starts the virtual desktop (`stateact-desktop start`), drives it with xdotool and captures the
screen with Pillow (XCB, falling back to ImageMagick's `import`). Keeping one process means one
RPC per action: run the xdotool commands, wait for the screen to settle, return the scaled PNG.
Only the sandbox's own Python and Pillow are used here; nothing from the host package.
The desktop's environment file lives in /tmp, where the agent can write, so only a display name
and a D-Bus address of the expected shape are taken from it.
"""

import hashlib
import io
import os
import subprocess
import time

# The runner puts this folder on the path (the bench's baseline sends this file's source alone).
from desktop_env import NoDesktop, desktop_env
from PIL import Image

try:  # elsewhere (the bench's baseline) grabs are polled
    from x11damage import DamageWatch, wait_quiet
    from x11keymap import bind_characters
    from x11pointer import Pointer
except ImportError:
    DamageWatch = Pointer = wait_quiet = None

    def bind_characters(text):
        """Without the helper module xdotool binds missing characters itself."""


UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}  # xdotool types non-ASCII only in a UTF-8 locale
LAID_OUT_CAP_S = 10.0
# After an action: once it drew, the screen has settled when nothing changed for SETTLE_QUIET_S;
# an action that drew nothing within SETTLE_RESPONSE_S had no visible effect. Measured in Calc: a
# click is painted before xdotool returns, typed text within 0.1 s, a menu 0.2 s after its key.
SETTLE_QUIET_S = 0.1
SETTLE_RESPONSE_S = 0.25
SETTLE_POLL_S = 0.02  # between grabs where there is no DAMAGE watch
PAINTED_COLOURS = 300  # a blank window with its title bar shows ~150 colours, a painted Calc ~900
MAX_SIDE = 8192
WORKDIR = "/tmp"  # replaced by the runner with the toolbox's private folder
_grabber = {"kind": None}
_watch = {"display": None, "damage": None, "pointer": None}


class Refusal(Exception):
    """Bad input the model can fix; reported as a plain sentence."""


def describe(exc):
    """An unexpected failure as one line for the model."""
    return f"{type(exc).__name__}: {exc}"


def _load_environment():
    """DISPLAY and the D-Bus address of the running desktop, checked; Refusal if there is none."""
    try:
        os.environ.update(desktop_env())
    except NoDesktop as exc:
        raise Refusal(str(exc)) from None
    os.environ.update(UTF8)


def _ensure_environment():
    # After a restart of this process (a call overstayed its timeout) the desktop is still up.
    if "DISPLAY" not in os.environ:
        _load_environment()


def _size(width, height):
    for value in (width, height):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_SIDE:
            raise Refusal(f"a width or height must be a whole number of pixels, got {value!r}.")
    return width, height


# -- desktop ---------------------------------------------------------------------------------------
def start(width, height):
    _size(width, height)
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
    _load_environment()
    geometry = _xdotool(["getdisplaygeometry"]).split()
    return {
        "width": int(geometry[0]),
        "height": int(geometry[1]),
        "seconds": time.monotonic() - began,
        "screen_watch": screen_watch(),
    }


def _xdotool(args, timeout=30):
    _ensure_environment()
    done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=timeout)
    problem = done.stderr.strip()
    if "No such key name" in problem:
        name = problem.split("'")[1] if problem.count("'") >= 2 else problem
        raise Refusal(
            f"unknown key name {name!r}; use X keysyms such as Return, Escape, Tab, "
            "BackSpace, Delete, Up, Page_Down, F5, ctrl+s, shift+Tab, alt+F4."
        )
    if done.returncode != 0:
        raise Refusal(f"xdotool {' '.join(args[:2])} failed: {problem or done.stdout.strip()}")
    return done.stdout


# -- screen ----------------------------------------------------------------------------------------
def _grab():
    """The whole screen as an RGB image."""
    _ensure_environment()
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


def _damage_watch():
    """The display's DamageWatch, or None where DAMAGE is unavailable (then every poll grabs)."""
    display = os.environ.get("DISPLAY")
    if DamageWatch is not None and _watch["display"] != display:
        try:
            _watch["damage"] = DamageWatch(display)
        except OSError:
            _watch["damage"] = None
        _watch.update(display=display, pointer=None)
    return _watch["damage"]


def _pointer():
    """The display's Pointer (in-process moves and clicks), or None (then xdotool does them)."""
    _damage_watch()  # a new display resets both
    display = os.environ.get("DISPLAY")
    if Pointer is not None and _watch["pointer"] is None:
        try:
            _watch["pointer"] = Pointer(display)
        except OSError:
            return None
    return _watch["pointer"]


def screen_watch():
    return "damage" if _damage_watch() is not None else "polling"


def _settle(cap_s, quiet_s, response_s=None, drawn=False, poll_s=SETTLE_POLL_S):
    """Wait until the screen stopped changing (at most `cap_s`); returns the last frame.

    Settled: something changed (or `drawn`: the action drew while it ran) and nothing since for
    `quiet_s`; or nothing changed for `response_s` (default `quiet_s`). With the DAMAGE watch
    the X server says when anything is drawn, so the wait sleeps until a report or the end of
    the quiet spell and grabs once, at the end; without it every poll grabs and compares.
    """
    _ensure_environment()
    response_s = quiet_s if response_s is None else response_s
    damage = _damage_watch()
    if damage is not None:
        return _settle_on_reports(damage, cap_s, quiet_s, response_s, drawn)
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
            digest, changed_at, drawn = current, now, True
        elif now - changed_at >= (quiet_s if drawn else response_s):
            break
    return frame


def _settle_on_reports(damage, cap_s, quiet_s, response_s, drawn):
    """`_settle` with the X server's damage reports: no grab until the screen has been quiet for
    the spell; a report that arrives while the final grab runs means that frame may be torn, so
    the wait goes on (within the cap)."""
    began = time.monotonic()
    changed_at = began
    if damage.drawn():
        drawn = True  # drawn since the action's commands ended
    while True:
        now = time.monotonic()
        left = min(changed_at + (quiet_s if drawn else response_s), began + cap_s) - now
        if left <= 0:
            frame = _grab()
            if not damage.drawn() or time.monotonic() - began >= cap_s:
                return frame
            drawn, changed_at = True, time.monotonic()
            continue
        damage.wait(left)
        if damage.drawn():
            drawn, changed_at = True, time.monotonic()


def _png(image, width, height):
    if image.size != (width, height):
        image = image.resize((width, height), Image.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return {
        "png": buffer.getvalue(),
        "width": width,
        "height": height,
    }


def screenshot(width, height, settle_s=0.0):
    """The screen; with `settle_s`, once it has not changed for SETTLE_QUIET_S (at most
    `settle_s`)."""
    _size(width, height)
    frame = _settle(settle_s, SETTLE_QUIET_S) if settle_s > 0 else _grab()
    return _png(frame, width, height)


def act(commands, width, height, settle_s=2.0):
    """Run xdotool commands (`["sleep", s]` pauses), then return the screen once it settled (at
    most `settle_s`; 0: at once; None: no screenshot)."""
    if not isinstance(commands, list) or not all(
        isinstance(c, list) and c and all(isinstance(a, str) for a in c) for c in commands
    ):
        raise Refusal("`commands` must be a list of argument lists of strings.")
    damage = None
    if settle_s is not None:
        _size(width, height)
        if settle_s > 0:
            _ensure_environment()
            damage = _damage_watch()
            if damage is not None:
                damage.drawn()  # from here on, drawing is the action's
    for command in commands:
        if command[0] == "sleep":
            time.sleep(float(command[1]))
            continue
        if command[0] == "type":
            bind_characters(command[-1])
        pointer = _pointer()
        if pointer is not None and pointer.perform(command):
            continue
        if command[0] == "mousemove" and "--sync" in command and _pointer_is_at(command[-2:]):
            continue  # xdotool's `--sync` waits for the pointer to move: 15 s when it is there
        _xdotool(command)
    if settle_s is None:
        return {}
    if not settle_s > 0:
        return _png(_grab(), width, height)
    drawn = damage is not None and damage.drawn()
    frame = _settle(settle_s, SETTLE_QUIET_S, SETTLE_RESPONSE_S, drawn)
    return _png(frame, width, height)


def zoom(region, width, height):
    """The region (x0, y0, x1, y1 in screen pixels) enlarged to fit within width x height."""
    _size(width, height)
    if not (
        isinstance(region, list)
        and len(region) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) for v in region)
        and region[0] < region[2]
        and region[1] < region[3]
    ):
        raise Refusal("`region` must be four whole numbers [x0, y0, x1, y1] with x0 < x1, y0 < y1.")
    crop = _grab().crop(tuple(region))
    factor = min(width / crop.width, height / crop.height)
    size = (max(1, round(crop.width * factor)), max(1, round(crop.height * factor)))
    return _png(crop, *size)


def cursor():
    _ensure_environment()
    pointer = _pointer()
    if pointer is not None:
        x, y = pointer.position()
        return {"x": x, "y": y}
    values = dict(line.split("=", 1) for line in _xdotool(["getmouselocation", "--shell"]).split())
    return {"x": int(values["X"]), "y": int(values["Y"])}


def _pointer_is_at(target):
    pointer = _pointer()
    return pointer is not None and [str(v) for v in pointer.position()] == target


def launch(argv, window, timeout_s=60.0):
    """Start a program on the desktop; wait until a window named `window` shows and the screen
    settles."""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise Refusal("`argv` must be a non-empty list of strings.")
    _ensure_environment()
    began = time.monotonic()
    # The log goes to the toolbox's private folder: a name in /tmp could be the agent's symlink.
    log_path = os.path.join(WORKDIR, f"launch-{os.path.basename(argv[0])}.log")
    with open(log_path, "ab") as log:
        subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
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
    # (a screen of more than a few colours), then for it to stay put.
    while _grab().reduce(4).getcolors(PAINTED_COLOURS) is not None:
        if time.monotonic() - began > timeout_s:
            raise Refusal(f"the {window!r} window stayed blank for {timeout_s:g} s.")
        time.sleep(0.1)
    remaining = timeout_s - (time.monotonic() - began)
    _wait_until_laid_out(min(LAID_OUT_CAP_S, max(0.5, remaining)))
    return {"window": found.stdout.split()[0], "seconds": time.monotonic() - began}


def _wait_until_laid_out(cap_s):
    """The launched window stays put (x11damage.wait_quiet); without DAMAGE, grabs are compared
    for as long a quiet spell (a blinking cursor then keeps the wait to its cap)."""
    damage = _damage_watch()
    if damage is not None:
        wait_quiet(damage, cap_s=cap_s)
    else:
        _settle(cap_s, 1.0)


def windows():
    _ensure_environment()
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
