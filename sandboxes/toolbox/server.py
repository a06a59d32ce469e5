"""The toolbox server: one JSON request per line on stdin, one JSON response per line on stdout.

Request  {"id": int, "method": str, "params": {...}} Response {"id": int, "result": {...}} or
{"id": int|null, "error": {"type": T, "message": str}} with T one of ToolError (the model can fix
it), BadRequest (malformed request) or Internal (a bug; its traceback goes to stderr). On start
the server prints {"ready": true, "pid": ..., "python": ...}. Requests run one at a time, in
order; EOF on stdin stops all sessions and exits 0.

Sessions come in two flavours: the agent's (its normal environment) and the observer's (`observer:
true` on bash.*/python.*, or every session of a toolbox started with `--observer`), isolated from
anything the agent can write (see `observer.py`). `proc.run` always runs as an observer.

Methods: ping, bash.run, bash.interrupt, bash.restart, python.run, python.restart, editor.run,
image.view, file.read, file.write, file.stat, fs.changed, proc.run, desktop.wait_quiet
(screen_quiet.py), and the drivers' methods `desktop.*` and `browser.*` (see driver_process.py),
proc.freeze and proc.thaw (freeze.py), each taking `timeout` besides its own params.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from functools import partial

from .bash_session import BashSession
from .driver_process import FUNCTIONS as DRIVER_FUNCTIONS
from .driver_process import DriverProcess
from .drivers.x11damage import CAP_S, QUIET_S
from .editor import Editor
from .errors import BadRequest, ToolError
from .files import changed_files, read_file, stat_file, write_file
from .freeze import freeze, thaw
from .images import view_image
from .process import run_process
from .python_session import PythonSession
from .screen_quiet import wait_until_quiet
from .screenless import why_unavailable

REQUIRED = object()
MAX_BASH_SESSIONS = 16
DEFAULT_SESSION = "default"


def param(params: dict, name: str, kind: type | tuple, default=REQUIRED):
    """One parameter, type-checked; a missing or mistyped one is a BadRequest naming it."""
    if name not in params or (params[name] is None and default is not REQUIRED):
        if default is REQUIRED:
            raise BadRequest(f"missing required param `{name}`.")
        return default
    value = params[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise BadRequest(f"param `{name}` must be {_kind_names(kinds)}, not a boolean.")
    if float in kinds and isinstance(value, int):
        value = float(value)
    if not isinstance(value, kinds):
        raise BadRequest(
            f"param `{name}` must be {_kind_names(kinds)}, not {type(value).__name__}."
        )
    return value


def _kind_names(kinds: tuple) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        list: "a list",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def positive(params: dict, name: str, default: float) -> float:
    value = param(params, name, float, default)
    if value <= 0:
        raise BadRequest(f"param `{name}` must be greater than 0.")
    return value


def non_negative_int(params: dict, name: str, default: int) -> int:
    value = param(params, name, int, default)
    if value < 0:
        raise BadRequest(f"param `{name}` must not be negative.")
    return value


class Toolbox:
    """Holds the sessions and maps method names to handlers."""

    def __init__(self, observer: bool = False):
        self.observer = observer  # every session observes (the toolbox of a gate's snapshot)
        self.screenless = (
            False  # agent sessions started from now on reach no screen (session.screen)
        )
        self.workdir = tempfile.mkdtemp(prefix="stateact-toolbox-")
        self.bash_sessions: dict[str, BashSession] = {}
        self.python: PythonSession | None = None
        # Named interpreters beside the default one (a second notebook for a script or a test).
        self.python_sessions: dict[str, PythonSession] = {}
        self.editor = Editor(cwd=self.default_cwd)
        self.methods: dict[str, Callable[[dict], dict]] = {
            "ping": lambda p: {"pong": True},
            "bash.run": self.bash_run,
            "bash.interrupt": self.bash_interrupt,
            "bash.restart": self.bash_restart,
            "python.run": self.python_run,
            "python.restart": self.python_restart,
            "editor.run": self.editor_run,
            "image.view": self.image_view,
            "file.read": lambda p: read_file(
                param(p, "path", str), non_negative_int(p, "max_bytes", 200_000_000)
            ),
            "file.write": self.file_write,
            "file.stat": lambda p: stat_file(param(p, "path", str)),
            "fs.changed": self.fs_changed,
            "proc.run": self.proc_run,
            "session.screen": self.session_screen,
            # The local backend's freeze (no root there): see freeze.py.
            "proc.freeze": lambda p: freeze(end=param(p, "end", bool, False)),
            "proc.thaw": lambda p: {"resumed": thaw(param(p, "frozen", list))},
            # The setup's wait for a launched window, in this process (no driver): see the module.
            "desktop.wait_quiet": lambda p: wait_until_quiet(
                positive(p, "quiet_s", QUIET_S), positive(p, "cap_s", CAP_S)
            ),
        }
        self.drivers: dict[str, DriverProcess] = {}
        for driver, functions in DRIVER_FUNCTIONS.items():
            for function in functions:
                self.methods[f"{driver}.{function}"] = partial(self.driver_call, driver, function)

    def default_cwd(self) -> str:
        session = self.bash_sessions.get(DEFAULT_SESSION)
        if session is not None:
            return session.cwd
        home = os.path.expanduser("~")
        return home if os.path.isdir(home) else "/"

    def handle(self, method: str, params: dict) -> dict:
        handler = self.methods.get(method)
        if handler is None:
            raise BadRequest(
                f"unknown method {method!r}; known methods: {', '.join(self.methods)}."
            )
        return handler(params)

    def close(self) -> None:
        for session in self.bash_sessions.values():
            session.close()
        self.bash_sessions.clear()
        if self.python is not None:
            self.python.close()
        for session in self.python_sessions.values():
            session.close()
        self.python_sessions.clear()
        for driver in self.drivers.values():
            driver.close()
        self.drivers.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _observes(self, params: dict) -> bool:
        return self.observer or param(params, "observer", bool, False)

    def _session_key(self, params: dict) -> tuple[str, bool]:
        """A session's name and flavour: an observer never shares a session with the agent."""
        name = param(params, "session", str, DEFAULT_SESSION)
        observes = self._observes(params)
        return (f"observer:{name}" if observes and not self.observer else name), observes

    def _screenless(self, observes: bool) -> bool:
        return self.screenless and not observes

    def session_screen(self, params: dict) -> dict:
        """`allowed: false`: the agent's bash and Python sessions reach no X display or session bus
        (see screenless.py); the agent's sessions already running are closed, to start again so."""
        allowed = param(params, "allowed", bool)
        if not allowed:
            problem = why_unavailable()
            if problem is not None:
                raise ToolError(f"the agent's sessions cannot be kept off the screen: {problem}.")
        if self.screenless != (not allowed):
            self.screenless = not allowed
            for name in [n for n in self.bash_sessions if not n.startswith("observer:")]:
                self.bash_sessions.pop(name).close()
            if self.python is not None and not self.observer:
                self.python.close()
                self.python = None
            for name in [n for n in self.python_sessions if not n.startswith("observer:")]:
                self.python_sessions.pop(name).close()
        return {"allowed": allowed, "enforced": "landlock" if not allowed else None}

    # -- bash ----------------------------------------------------------------------------------
    def _session(self, params: dict, create: bool = True) -> BashSession | None:
        name, observes = self._session_key(params)
        session = self.bash_sessions.get(name)
        if session is None and create:
            if len(self.bash_sessions) >= MAX_BASH_SESSIONS:
                raise ToolError(
                    f"Too many bash sessions (limit {MAX_BASH_SESSIONS}); reuse an existing one."
                )
            local_imports = param(params, "local_imports", bool, False)
            session = self.bash_sessions[name] = BashSession(
                name, self.workdir, observes, self._screenless(observes), local_imports
            )
        return session

    def bash_run(self, params: dict) -> dict:
        command = param(params, "command", str)
        timeout = positive(params, "timeout", 120.0)
        max_output = non_negative_int(params, "max_output", 30000)
        return self._session(params).run(command, timeout, max_output).as_dict()

    def bash_interrupt(self, params: dict) -> dict:
        session = self._session(params, create=False)
        return {"output": session.interrupt() if session else ""}

    def bash_restart(self, params: dict) -> dict:
        session = self._session(params, create=False)
        if session is None:
            self._session(params)
        else:
            session.restart()
        return {"restarted": True}

    # -- python --------------------------------------------------------------------------------
    def python_run(self, params: dict) -> dict:
        code = param(params, "code", str)
        timeout = positive(params, "timeout", 120.0)
        max_output = non_negative_int(params, "max_output", 30000)
        name, observes = self._session_key(params)
        if name != DEFAULT_SESSION:
            session = self._named_python(name, observes)
            return session.run(code, timeout, max_output, cwd=self.default_cwd())
        if self.python is None:
            self.python = PythonSession(observes, self._screenless(observes))
        return self.python.run(code, timeout, max_output, cwd=self.default_cwd())

    def python_restart(self, params: dict) -> dict:
        name, observes = self._session_key(params)
        if name != DEFAULT_SESSION:
            self._named_python(name, observes).restart()
        elif self.python is None:
            self.python = PythonSession(observes, self._screenless(observes))
        else:
            self.python.restart()
        return {"restarted": True}

    def _named_python(self, name: str, observes: bool) -> PythonSession:
        session = self.python_sessions.get(name)
        if session is None:
            if len(self.python_sessions) >= MAX_BASH_SESSIONS:
                raise ToolError(
                    f"Too many Python sessions (limit {MAX_BASH_SESSIONS}); reuse an existing one."
                )
            session = self.python_sessions[name] = PythonSession(
                observes, self._screenless(observes)
            )
        return session

    # -- drivers -------------------------------------------------------------------------------
    def driver_call(self, driver: str, function: str, params: dict) -> dict:
        timeout = positive(params, "timeout", 60.0)
        args = {name: value for name, value in params.items() if name != "timeout"}
        if driver not in self.drivers:
            self.drivers[driver] = DriverProcess(driver, self.workdir)
        return self.drivers[driver].call(function, args, timeout)

    # -- files ---------------------------------------------------------------------------------
    def editor_run(self, params: dict) -> dict:
        known = {
            "file_text": str,
            "old_str": str,
            "new_str": str,
            "insert_text": str,
            "insert_line": int,
            "view_range": list,
        }
        extra = {name: param(params, name, kind, None) for name, kind in known.items()}
        command = param(params, "command", str)
        path = param(params, "path", str)
        return {"output": self.editor.run(command, path, **extra)}

    def image_view(self, params: dict) -> dict:
        return view_image(
            param(params, "path", str),
            max_long_edge=int(positive(params, "max_long_edge", 1568)),
            max_pixels=int(positive(params, "max_pixels", 1_150_000)),
        )

    def file_write(self, params: dict) -> dict:
        return write_file(
            param(params, "path", str),
            param(params, "data_b64", str),
            mode=param(params, "mode", int, None),
            mkdirs=param(params, "mkdirs", bool, True),
        )

    def fs_changed(self, params: dict) -> dict:
        roots = param(params, "roots", list, ["/home/user", "/tmp"])
        if not all(isinstance(root, str) for root in roots):
            raise BadRequest("param `roots` must be a list of strings.")
        return changed_files(
            param(params, "since", float),
            roots,
            non_negative_int(params, "limit", 2000),
            skip=(self.workdir,),
        )

    def proc_run(self, params: dict) -> dict:
        """One command outside the sessions (argv, no shell): what backends without an exec of
        their own use for setup steps and probes."""
        argv = param(params, "argv", list)
        if not argv or not all(isinstance(arg, str) for arg in argv):
            raise BadRequest("param `argv` must be a non-empty list of strings.")
        timeout = positive(params, "timeout", 120.0)
        max_output = non_negative_int(params, "max_output", 1_000_000)
        return run_process(argv, timeout, max_output, cwd=os.path.expanduser("~"))


def respond(request_id, body: dict) -> bytes:
    return (json.dumps({"id": request_id, **body}, ensure_ascii=False) + "\n").encode(
        "utf-8", errors="replace"
    )


def error(request_id, kind: str, message: str) -> bytes:
    return respond(request_id, {"error": {"type": kind, "message": message}})


def serve_line(toolbox: Toolbox, line: bytes) -> bytes:
    """The response line for one request line; never raises."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        return error(None, "BadRequest", f"the request line is not valid JSON ({exc}).")
    if not isinstance(request, dict):
        return error(
            None, "BadRequest", "the request must be a JSON object with id, method and params."
        )
    request_id = request.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        return error(None, "BadRequest", "the request needs an integer `id`.")
    method, params = request.get("method"), request.get("params", {})
    if not isinstance(method, str):
        return error(request_id, "BadRequest", "the request needs a string `method`.")
    if not isinstance(params, dict):
        return error(request_id, "BadRequest", "`params` must be a JSON object.")
    try:
        return respond(request_id, {"result": toolbox.handle(method, params)})
    except ToolError as exc:
        return error(request_id, "ToolError", str(exc))
    except BadRequest as exc:
        return error(request_id, "BadRequest", str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug in one method must not take the server down
        traceback.print_exc(file=sys.stderr)
        summary = str(exc).splitlines()[0] if str(exc) else ""
        return error(
            request_id, "Internal", f"{method} failed: {type(exc).__name__}: {summary}".rstrip(": ")
        )


def _refuse_ptrace() -> None:
    """Make this process non-dumpable: the agent runs as the same user and could otherwise attach
    to the toolbox (ptrace, /proc/PID/mem) and change what it reports. Sessions it starts are
    dumpable again after their exec, so the agent's own programs behave normally."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):  # not Linux: nothing to do
        pass


def main(observer: bool = False) -> None:
    _refuse_ptrace()
    # Keep the protocol stream to ourselves: anything else printing to fd 1 lands on stderr.
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    toolbox = Toolbox(observer)
    try:
        ready = {
            "ready": True,
            "pid": os.getpid(),
            "python": platform.python_version(),
            "prefix": sys.prefix,
            "observer": observer,
        }
        protocol_out.write((json.dumps(ready) + "\n").encode())
        protocol_out.flush()
        for line in requests:
            if not line.strip():
                continue
            protocol_out.write(serve_line(toolbox, line))
            protocol_out.flush()
    except BrokenPipeError:
        pass
    finally:
        toolbox.close()
    sys.exit(0)
