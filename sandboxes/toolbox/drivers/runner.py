"""The program of a driver process: `python3 -I -u -c <this source> DRIVER_FILE REQ RES DIR`.

It loads one driver module (`desktop.py`, `browser.py`) from the toolbox's own root-owned folder,
then serves its `FUNCTIONS` one call at a time: a JSON request line `{"function", "args"}` arrives
on fd REQ; the reply goes to fd RES as one JSON header line `{"ok", "result" | "kind", "error",
"binary": N}` followed by N raw bytes (a screenshot's PNG, sent once and never re-encoded here).
Isolated mode (-I) keeps the sandbox user's site-packages, PYTHONPATH and cwd out of the imports,
so files the agent writes cannot change what the driver runs. Nothing from the toolbox package.
"""

import importlib.util
import inspect
import json
import os
import signal
import sys

_state = {"running": False}


def _interrupt_only_while_running(signum, frame):
    # A late interrupt (after the call finished) must not kill the driver between calls.
    if _state["running"]:
        raise KeyboardInterrupt


def _load(path):
    spec = importlib.util.spec_from_file_location("stateact_driver", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reply(function, args, module):
    """The header dict and the binary payload for one call; never raises."""
    target = module.FUNCTIONS.get(function)
    if target is None:
        known = ", ".join(module.FUNCTIONS)
        return {"ok": False, "kind": "BadRequest", "error": f"no function {function!r}: {known}"}
    try:
        bound = inspect.signature(target).bind(**args)
    except TypeError as exc:
        return {"ok": False, "kind": "BadRequest", "error": f"{function}: {exc}"}
    _state["running"] = True
    try:
        result = target(*bound.args, **bound.kwargs)
    except module.Refusal as exc:
        return {"ok": False, "kind": "ToolError", "error": str(exc)}
    except KeyboardInterrupt:
        return {"ok": False, "kind": "Timeout", "error": f"{function} was interrupted."}
    except Exception as exc:  # noqa: BLE001 - every failure goes back as one line, never a crash
        return {"ok": False, "kind": "ToolError", "error": module.describe(exc)}
    finally:
        _state["running"] = False
    return {"ok": True, "result": result}


def main():
    driver_file, request_fd, result_fd, workdir = sys.argv[1:5]
    requests = os.fdopen(int(request_fd), "rb")
    results = os.fdopen(int(result_fd), "wb", buffering=0)
    sys.argv = [driver_file]
    signal.signal(signal.SIGINT, _interrupt_only_while_running)
    os.chdir("/")
    # The driver's own folder (root-owned, beside the toolbox) holds the helpers it imports.
    sys.path.insert(0, os.path.dirname(os.path.abspath(driver_file)))
    module = _load(driver_file)
    module.WORKDIR = workdir
    for line in requests:
        request = json.loads(line)
        header = _reply(request.get("function"), request.get("args") or {}, module)
        payload = b""
        result = header.get("result")
        if isinstance(result, dict) and isinstance(result.get("png"), bytes):
            payload = result.pop("png")
        header["binary"] = len(payload)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        data = memoryview(json.dumps(header).encode() + b"\n" + payload)
        while data:
            data = data[results.write(data) :]


main()
