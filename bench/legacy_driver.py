"""The bench's baseline only: the desktop driver called the way it was before it became toolbox
methods (kept here so `make bench` can show the round trip before and after).

Every call sent the whole driver source inside a Python cell of a named interpreter session; the
driver printed its result after a marker, a screenshot as base64 inside that JSON line, inside the
cell's stdout, inside the toolbox's JSON answer. Run this way the driver cannot import its helper
module, so its settle wait grabs the screen at every poll, as it did before the DAMAGE watch; and
its `act` keeps the settle wait it had then (unchanged for 0.25 s, whatever the action drew).
"""

from __future__ import annotations

import base64
import json

from sandboxes.base import TOOLBOX_DIR

MARKER = "@@STATEACT-RESULT@@ "
SESSION = "bench-legacy-desktop"
MAX_OUTPUT_CHARS = 64_000_000
# The entry point the old driver had: run a function, print its result after the marker.
ENTRY = """
import base64 as _b64, json as _json
def _sa_call(name, args_json):
    try:
        result = FUNCTIONS[name](**_json.loads(args_json))
        if isinstance(result.get("png"), bytes):
            result["png_b64"] = _b64.b64encode(result.pop("png")).decode("ascii")
        reply = {"ok": True, "result": result}
    except Exception as exc:
        reply = {"ok": False, "error": describe(exc)}
    print(MARKER + _json.dumps(reply))
MARKER = %r

def _settle_before(cap_s, quiet_s=0.25, poll_s=0.04):
    # The settle wait as it was: unchanged for 0.25 s after the commands, whatever they did.
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

def _act_before(commands, width, height, settle_s=2.0):
    for command in commands:
        if command[0] == "sleep":
            time.sleep(float(command[1]))
            continue
        if command[0] == "type":
            bind_characters(command[-1])
        _xdotool(command)
    if settle_s is None:
        return {}
    _size(width, height)
    return _png(_settle_before(settle_s) if settle_s > 0 else _grab(), width, height)

FUNCTIONS = {**FUNCTIONS, "act": _act_before}
"""


class LegacyDesktop:
    """`act` and `screenshot` through a Python cell carrying the driver source, as before."""

    def __init__(self, sandbox):
        self.sandbox = sandbox
        drivers = TOOLBOX_DIR / "drivers"
        # The desktop's file reader inlined: a cell has no folder to import it from.
        driver = (drivers / "desktop.py").read_text(encoding="utf-8")
        driver = driver.replace("from desktop_env import NoDesktop, desktop_env\n", "")
        inlined = (drivers / "desktop_env.py").read_text(encoding="utf-8")
        self.source = inlined + driver + ENTRY % MARKER

    def call(self, function: str, timeout: float = 60.0, **args) -> dict:
        code = (
            "if '_sa_call' not in globals():\n"
            f"    exec(compile({self.source!r}, '<stateact-driver>', 'exec'), globals())\n"
            f"_sa_call({function!r}, {json.dumps(args, ensure_ascii=False)!r})\n"
        )
        reply = self.sandbox.call(
            "python.run", code=code, session=SESSION, timeout=timeout, max_output=MAX_OUTPUT_CHARS
        )
        output = reply.get("output") or ""
        position = output.rfind(MARKER)
        if position < 0:
            raise RuntimeError(f"the legacy driver failed: {(reply.get('error') or output)[-800:]}")
        result = json.loads(output[position + len(MARKER) :].split("\n", 1)[0])
        if not result.get("ok"):
            raise RuntimeError(result.get("error"))
        return result["result"]

    def act(self, commands: list[list[str]], size: tuple[int, int], settle_s: float = 2.0) -> bytes:
        shot = self.call("act", commands=commands, width=size[0], height=size[1], settle_s=settle_s)
        return base64.b64decode(shot["png_b64"])

    def screenshot(self, size: tuple[int, int]) -> bytes:
        shot = self.call("screenshot", width=size[0], height=size[1])
        return base64.b64decode(shot["png_b64"])
