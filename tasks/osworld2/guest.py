"""The guest-server contract OSWorld's controllers call, answered from a StateAct sandbox.

OSWorld (1.0 and 2.0) drives its machine through an HTTP server inside the guest: the setup
controller uploads files and launches programs, the evaluators' getters fetch files and run
commands, the agent loop takes screenshots. StateAct has no such server in its sandboxes; instead
`GuestServer` listens on the host's loopback and turns each route into the sandbox's own calls, so
the benchmark's unmodified controllers can be pointed at it (`127.0.0.1:<port>` as the machine's
address). Routes, parameters and answers follow the contract as OSWorld's controllers use it; the
guest server's own code is not used (it publishes no licence).

Two phases: during `setup` commands run as the task's user with the setup steps' sudo rule (a
command using `sudo` runs as root before the agent, as on OSWorld's VM); during `judging` (after the
agent stopped) every command runs as an observer, as StateAct's own getters do.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import secrets
import shlex
import shutil
import tempfile
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs

from harness.kernel.core import StateActError, ToolError
from sandboxes.base import SANDBOX_HOME, SANDBOX_USER
from tasks.getters.desktop import get_vm_window_size, terminal_text, wallpaper_path
from tasks.getters.registry import ATSPI_DUMP, GetterContext, SandboxSource
from tasks.osworld2.guest_scripts import LIST_DIRECTORY, RUN_PYTHON
from tasks.osworld2.recording import ScreenRecorder
from tasks.setup import AS_THE_USER, SOURCE_DESKTOP, SUDO, SUDO_FUNCTION, SetupRunner

log = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 1 << 30
"""Largest body a client may send (an upload); OSWorld 2.0's assets stay well below it."""
COMMAND_TIMEOUT_S = 120.0
"""OSWorld's guest kills a command after 120 s."""
Phase = Literal["setup", "judging"]
HOME_WORD = re.compile(r"(^|[\s=:;|&(\"'])~/")


class RouteError(Exception):
    """An answer other than 200: the status and a JSON error the client logs."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


class GuestMachine:
    """What the routes act on: one sandbox, its desktop, and the phase of the run."""

    def __init__(self, runner: SetupRunner, screen: tuple[int, int], work_dir: Path):
        self.sandbox = runner.sandbox
        self.task = runner.task
        self.screen = screen
        self.runner = runner
        self.phase: Phase = "setup"
        self.getters = GetterContext(
            task=self.task, source=SandboxSource(self.sandbox), cache_dir=None, work_dir=work_dir
        )
        self.recorder = ScreenRecorder(self.screenshot, work_dir / "recording")

    # commands -----------------------------------------------------------------------------------
    def run(self, command: str | list[str], shell: bool, timeout: float = COMMAND_TIMEOUT_S):
        """Run a command in the machine: {status, output, error, returncode} as OSWorld's."""
        if isinstance(command, list):
            text = shlex.join(_expand_home(str(part)) for part in command)
        elif shell:
            # The guest's shell runs as the user, whose `~` is /home/user; an observer's HOME is
            # another folder, so a leading `~/` of a word is spelled out.
            text = HOME_WORD.sub(lambda m: m.group(1) + SANDBOX_HOME + "/", command)
        else:
            text = shlex.join(_expand_home(part) for part in shlex.split(command))
        marker = secrets.token_hex(8)
        # stdout and stderr come back apart, as the guest's subprocess gives them: stderr goes to a
        # private file and follows stdout after a random marker.
        script = (
            f'err=$(mktemp); ( cd {SANDBOX_HOME}; {text}\n) 2>"$err"; code=$?; '
            f'printf "\\n{marker}\\n"; cat "$err"; rm -f "$err"; exit $code'
        )
        code, output = self._bash(script, timeout, sudo=SUDO.search(text) is not None)
        stdout, _, stderr = output.rpartition(f"\n{marker}\n")
        if not _:
            stdout, stderr = output, ""
        return {"status": "success", "output": stdout, "error": stderr, "returncode": code}

    def _bash(self, script: str, timeout: float, sudo: bool = False) -> tuple[int, str]:
        if self.phase == "judging":
            return self.sandbox.exec(["bash", "-c", SOURCE_DESKTOP + script], timeout=timeout)
        self.runner.ensure_desktop(optional=True)
        prefix, user = (SUDO_FUNCTION if sudo else ""), SANDBOX_USER
        if sudo and self.runner.before_agent:
            prefix, user = AS_THE_USER + prefix, "root"
        return self.runner.bash(prefix + script, timeout=timeout, user=user)

    # screen -------------------------------------------------------------------------------------
    def screenshot(self) -> bytes:
        self.runner.ensure_desktop()
        width, height = self.screen
        shot = self.sandbox.call("desktop.screenshot", width=width, height=height, settle_s=0.0)
        return base64.b64decode(shot["png_b64"])

    def accessibility(self) -> str:
        code, output = self.sandbox.exec(
            ["bash", "-c", f"{SOURCE_DESKTOP}python3 -c {shlex.quote(ATSPI_DUMP)} 2>/dev/null"]
        )
        if code != 0:
            raise RouteError(HTTPStatus.INTERNAL_SERVER_ERROR, "no accessibility tree")
        return output

    # files --------------------------------------------------------------------------------------
    def read_file(self, path: str, dest: Path) -> Path:
        path = _expand_home(path)
        if self.sandbox.exec(["test", "-f", path])[0] != 0:
            raise RouteError(HTTPStatus.NOT_FOUND, "File not found")
        self.sandbox.copy_out(path, dest)
        return dest

    def upload(self, path: str, data: bytes) -> int:
        path = _expand_home(path)
        folder = path.rsplit("/", 1)[0] or "/"
        with tempfile.TemporaryDirectory(prefix="stateact-upload-") as tmp:
            source = Path(tmp) / "file"
            source.write_bytes(data)
            if self._bash(f"mkdir -p {shlex.quote(folder)}", 30.0)[0] != 0:
                raise RouteError(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot make {folder}")
            self.sandbox.copy_in(source, path)
        return len(data)


def _expand_home(path: str) -> str:
    if path == "~" or path.startswith("~/"):
        return SANDBOX_HOME + path[1:]
    return path


class GuestServer:
    """An HTTP server on 127.0.0.1 answering OSWorld's guest routes for one `GuestMachine`."""

    def __init__(self, machine: GuestMachine, host: str = "127.0.0.1", port: int = 0):
        self.machine = machine
        handler = type("Handler", (_Handler,), {"machine": machine})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def endpoint(self, chromium_port: int = 9222, vnc_port: int = 8006, vlc_port: int = 8080):
        """The machine's address as OSWorld's providers give it: `ip:server:cdp:vnc:vlc`."""
        return f"127.0.0.1:{self.port}:{chromium_port}:{vnc_port}:{vlc_port}"

    def __enter__(self) -> GuestServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.machine.recorder.close()


class _Handler(BaseHTTPRequestHandler):
    machine: GuestMachine
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        log.debug("guest %s", format % args)

    def do_GET(self) -> None:
        self._dispatch(GET_ROUTES)

    def do_POST(self) -> None:
        self._dispatch(POST_ROUTES)

    def _dispatch(self, routes: dict) -> None:
        route = routes.get(self.path.split("?", 1)[0])
        if route is None:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no route {self.path}"})
            return
        try:
            status, body = HTTPStatus.OK, route(self, self.machine)
        except RouteError as exc:
            status, body = exc.status, {"status": "error", "error": str(exc)}
        except (StateActError, ToolError, OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("guest route %s failed: %s", self.path, exc)
            status, body = HTTPStatus.INTERNAL_SERVER_ERROR, {"status": "error", "error": str(exc)}
        self._send(status, body)

    def _send(self, status: HTTPStatus, body) -> None:
        if isinstance(body, Path):  # a file fetched into a private folder of its own
            data, kind = body.read_bytes(), "application/octet-stream"
            shutil.rmtree(body.parent, ignore_errors=True)
        elif isinstance(body, bytes):
            data, kind = body, "image/png"
        elif isinstance(body, str):
            data, kind = body.encode(), "text/plain; charset=utf-8"
        else:
            data, kind = json.dumps(body).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # request bodies -----------------------------------------------------------------------------
    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_UPLOAD_BYTES:
            raise RouteError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "the request body is too large")
        return self.rfile.read(length) if length else b""

    def json(self) -> dict:
        try:
            value = json.loads(self.body() or b"{}")
        except json.JSONDecodeError as exc:
            raise RouteError(HTTPStatus.BAD_REQUEST, f"the body is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise RouteError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
        return value

    def form(self) -> dict[str, bytes]:
        """The fields of a urlencoded or multipart form body (a file field's bytes as its value)."""
        kind = self.headers.get("Content-Type", "")
        raw = self.body()
        if kind.startswith("multipart/form-data"):
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {kind}\r\n\r\n".encode() + raw
            )
            fields = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if name:
                    fields[name] = part.get_payload(decode=True) or b""
            return fields
        return {key: values[0].encode() for key, values in parse_qs(raw.decode()).items()}

    def field(self, form: dict[str, bytes], name: str) -> str:
        if name not in form:
            raise RouteError(HTTPStatus.BAD_REQUEST, f"{name} is required")
        return form[name].decode("utf-8", "replace")


# routes: each takes the handler and the machine and returns the answer's body ---------------------
def _execute(handler: _Handler, machine: GuestMachine):
    data = handler.json()
    shell = bool(data.get("shell", False))
    command = data.get("command", "" if shell else [])
    if not command:
        raise RouteError(HTTPStatus.BAD_REQUEST, "command is required")
    return machine.run(command, shell)


def _run_bash_script(handler: _Handler, machine: GuestMachine):
    data = handler.json()
    script = data.get("script")
    if not script:
        return {"status": "error", "output": "Script not supplied!", "error": "", "returncode": -1}
    folder = shlex.quote(_expand_home(str(data.get("working_dir") or SANDBOX_HOME)))
    timeout = float(data.get("timeout", 100))
    result = machine.run(f"cd {folder} && bash -c {shlex.quote(script)} 2>&1", True, timeout)
    result["error"] = ""
    if result["returncode"] != 0:
        result["status"] = "error"
    return result


def _run_python(handler: _Handler, machine: GuestMachine):
    code = handler.json().get("code")
    if not code:
        raise RouteError(HTTPStatus.BAD_REQUEST, "Code not supplied!")
    result = machine.run(f"python3 -c {shlex.quote(RUN_PYTHON)} {shlex.quote(code)}", True)
    if result["returncode"] != 0:
        result["status"] = "error"
    return result


def _launch(handler: _Handler, machine: GuestMachine):
    data = handler.json()
    machine.runner.launch({"command": data.get("command"), "shell": data.get("shell", False)})
    return f"{data.get('command')} launched successfully"


def _open_file(handler: _Handler, machine: GuestMachine):
    path = handler.json().get("path")
    if not path:
        raise RouteError(HTTPStatus.BAD_REQUEST, "Path not supplied!")
    machine.runner.open({"path": _expand_home(str(path))})
    return "File opened successfully"


def _window(action: str):
    def route(handler: _Handler, machine: GuestMachine):
        data = handler.json()
        if not data.get("window_name"):
            raise RouteError(HTTPStatus.BAD_REQUEST, "window_name required")
        getattr(machine.runner, action)(data)
        return f"Window {action.split('_')[0]}d successfully"

    return route


def _file(handler: _Handler, machine: GuestMachine):
    path = handler.field(handler.form(), "file_path")
    folder = Path(tempfile.mkdtemp(prefix="stateact-guest-file-"))
    return machine.read_file(path, folder / "file")


def _upload(handler: _Handler, machine: GuestMachine):
    form = handler.form()
    path = handler.field(form, "file_path")
    if "file_data" not in form:
        raise RouteError(HTTPStatus.BAD_REQUEST, "file_path and file_data are required")
    return f"File Uploaded: {machine.upload(path, form['file_data'])} bytes"


def _screen_size(handler: _Handler, machine: GuestMachine):
    return {"width": machine.screen[0], "height": machine.screen[1]}


def _window_size(handler: _Handler, machine: GuestMachine):
    name = handler.field(handler.form(), "app_class_name")
    size = get_vm_window_size({"app_class_name": name}, machine.getters)
    if size is None:
        raise RouteError(HTTPStatus.NOT_FOUND, f"no window of class {name}")
    return size


def _wallpaper(handler: _Handler, machine: GuestMachine):
    reply = machine.run("gsettings get org.gnome.desktop.background picture-uri", True)
    path = wallpaper_path(reply["output"])
    if not path:
        raise RouteError(HTTPStatus.NOT_FOUND, "no wallpaper is set")
    folder = Path(tempfile.mkdtemp(prefix="stateact-guest-wallpaper-"))
    return machine.read_file(path, folder / "wallpaper")


def _list_directory(handler: _Handler, machine: GuestMachine):
    path = handler.json().get("path")
    if not path:
        raise RouteError(HTTPStatus.BAD_REQUEST, "'path' is required")
    reply = machine.run(f"python3 -c {shlex.quote(LIST_DIRECTORY)} {shlex.quote(path)}", True)
    if reply["returncode"] != 0:
        raise RouteError(HTTPStatus.NOT_FOUND, reply["error"].strip() or "no such directory")
    return {"directory_tree": json.loads(reply["output"])}


def _cursor(handler: _Handler, machine: GuestMachine):
    position = machine.sandbox.call("desktop.cursor")
    return [position["x"], position["y"]]


def _start_recording(handler: _Handler, machine: GuestMachine):
    if machine.recorder.recording:
        raise RouteError(HTTPStatus.BAD_REQUEST, "Recording is already in progress.")
    machine.recorder.start()
    return {"status": "success", "message": "Started recording."}


def _end_recording(handler: _Handler, machine: GuestMachine):
    if not machine.recorder.recording:
        raise RouteError(HTTPStatus.BAD_REQUEST, "No recording in progress to stop.")
    folder = Path(tempfile.mkdtemp(prefix="stateact-guest-recording-"))
    return Path(shutil.copy(machine.recorder.stop(), folder / "recording.mp4"))


def _terminal(handler: _Handler, machine: GuestMachine):
    return {"output": terminal_text(machine.accessibility()) or None}


GET_ROUTES = {
    "/screenshot": lambda handler, machine: machine.screenshot(),
    "/accessibility": lambda handler, machine: {"AT": machine.accessibility()},
    "/terminal": _terminal,
    "/platform": lambda handler, machine: "Linux",
    "/cursor_position": _cursor,
}
POST_ROUTES = {
    "/execute": _execute,
    "/setup/execute": _execute,
    "/run_bash_script": _run_bash_script,
    "/run_python": _run_python,
    "/setup/launch": _launch,
    "/setup/open_file": _open_file,
    "/setup/activate_window": _window("activate_window"),
    "/setup/close_window": _window("close_window"),
    "/file": _file,
    "/setup/upload": _upload,
    "/screen_size": _screen_size,
    "/window_size": _window_size,
    "/wallpaper": _wallpaper,
    "/desktop_path": lambda handler, machine: {"desktop_path": f"{SANDBOX_HOME}/Desktop"},
    "/list_directory": _list_directory,
    "/start_recording": _start_recording,
    "/end_recording": _end_recording,
}
