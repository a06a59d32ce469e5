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
    done = subprocess.run(
        ["stateact-desktop", "start", f"{width}x{height}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
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
        else:
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
    _settle(max(0.5, timeout_s - (time.monotonic() - began)), quiet_s=0.5)
    return {"window": found.stdout.split()[0], "seconds": time.monotonic() - began}


def windows():
    done = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True)
    return {"windows": done.stdout}


FUNCTIONS = {
    "start": start,
    "screenshot": screenshot,
    "act": act,
    "zoom": zoom,
    "cursor": cursor,
    "launch": launch,
    "windows": windows,
}
