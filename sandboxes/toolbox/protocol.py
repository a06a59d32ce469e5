"""The toolbox's methods as types: one request and one result dataclass per method.

Standard library only, so the sandbox side can use it as the host side does. A request knows its
method name (`METHOD`) and the result type it is answered with (`RESULT`); `params()` is what
travels as the JSON line's `params` (fields left at None are not sent, so the server's defaults
apply). The channel still carries JSON lines (`server.py`); these types name the fields once.
The drivers' methods (`desktop.*`, `browser.*`) take their own parameter sets and stay untyped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Generic, TypeVar


@dataclass(frozen=True)
class Result:
    """What a method answers; unknown keys (a newer toolbox's) are ignored."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in data.items() if name in known})


R = TypeVar("R", bound=Result)


@dataclass(frozen=True)
class Request(Generic[R]):
    """One call of a toolbox method, answered with an `R`."""

    METHOD: ClassVar[str]
    RESULT: ClassVar[type]

    def params(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(self).items() if value is not None}

    def result(self, data: dict[str, Any]) -> R:
        """The answer's `result` object as this method's result type."""
        return self.RESULT.from_dict(data)


# -- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CommandResult(Result):
    """A shell command's end: its output, exit code and working folder in one answer."""

    output: str = ""
    exit_code: int | None = None
    cwd: str = ""
    timed_out: bool = False
    truncated_chars: int = 0


@dataclass(frozen=True)
class ProcessResult(Result):
    """A `proc.run` command's end (no session, so no working folder)."""

    output: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    truncated_chars: int = 0


@dataclass(frozen=True)
class PythonResult(Result):
    output: str = ""
    error: str | None = None
    """The exception's traceback text when the code raised."""
    timed_out: bool = False
    truncated_chars: int = 0


@dataclass(frozen=True)
class OutputResult(Result):
    output: str = ""


@dataclass(frozen=True)
class Restarted(Result):
    restarted: bool = True


@dataclass(frozen=True)
class ImageResult(Result):
    png_b64: str = ""
    width: int = 0
    height: int = 0
    original_width: int = 0
    original_height: int = 0


@dataclass(frozen=True)
class FileData(Result):
    data_b64: str = ""
    size: int = 0
    mtime: float = 0.0


@dataclass(frozen=True)
class Written(Result):
    size: int = 0


@dataclass(frozen=True)
class FileStat(Result):
    exists: bool = False
    is_dir: bool = False
    size: int = 0
    mtime: float = 0.0


@dataclass(frozen=True)
class ChangedFiles(Result):
    paths: list[dict] = field(default_factory=list)
    """`{"path", "mtime", "size"}` of each changed file, newest first."""
    truncated: bool = False


@dataclass(frozen=True)
class Pong(Result):
    pong: bool = False


@dataclass(frozen=True)
class ScreenPolicy(Result):
    allowed: bool = True
    enforced: str | None = None
    """How the agent's sessions are kept off the screen (`landlock`), None while allowed."""


@dataclass(frozen=True)
class Frozen(Result):
    """What a freeze did: the processes it stopped, the programs it kept, why any were refused."""

    frozen: list[dict] = field(default_factory=list)
    kept: list = field(default_factory=list)
    refused: dict = field(default_factory=dict)
    ended: bool = False


@dataclass(frozen=True)
class Resumed(Result):
    resumed: int = 0


# -- requests ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ping(Request[Pong]):
    METHOD = "ping"
    RESULT = Pong


@dataclass(frozen=True)
class BashRun(Request[CommandResult]):
    METHOD = "bash.run"
    RESULT = CommandResult
    command: str
    timeout: float | None = None
    max_output: int | None = None
    session: str | None = None
    local_imports: bool | None = None
    """An observer session whose python imports from its working folder (the gate model's)."""
    observer: bool | None = None


@dataclass(frozen=True)
class BashInterrupt(Request[OutputResult]):
    METHOD = "bash.interrupt"
    RESULT = OutputResult
    session: str | None = None
    observer: bool | None = None


@dataclass(frozen=True)
class BashRestart(Request[Restarted]):
    METHOD = "bash.restart"
    RESULT = Restarted
    session: str | None = None
    observer: bool | None = None
    local_imports: bool | None = None


@dataclass(frozen=True)
class PythonRun(Request[PythonResult]):
    METHOD = "python.run"
    RESULT = PythonResult
    code: str
    timeout: float | None = None
    max_output: int | None = None
    session: str | None = None
    observer: bool | None = None


@dataclass(frozen=True)
class PythonRestart(Request[Restarted]):
    METHOD = "python.restart"
    RESULT = Restarted
    session: str | None = None
    observer: bool | None = None


@dataclass(frozen=True)
class EditorRun(Request[OutputResult]):
    """Anthropic's `str_replace_based_edit_tool` commands (view, create, str_replace, insert,
    undo_edit)."""

    METHOD = "editor.run"
    RESULT = OutputResult
    command: str
    path: str
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    insert_text: str | None = None
    view_range: list[int] | None = None


@dataclass(frozen=True)
class ImageView(Request[ImageResult]):
    METHOD = "image.view"
    RESULT = ImageResult
    path: str
    max_long_edge: int | None = None
    max_pixels: int | None = None


@dataclass(frozen=True)
class FileRead(Request[FileData]):
    METHOD = "file.read"
    RESULT = FileData
    path: str
    max_bytes: int | None = None


@dataclass(frozen=True)
class FileWrite(Request[Written]):
    METHOD = "file.write"
    RESULT = Written
    path: str
    data_b64: str
    mode: int | None = None
    mkdirs: bool | None = None


@dataclass(frozen=True)
class FileStatRequest(Request[FileStat]):
    METHOD = "file.stat"
    RESULT = FileStat
    path: str


@dataclass(frozen=True)
class FsChanged(Request[ChangedFiles]):
    METHOD = "fs.changed"
    RESULT = ChangedFiles
    since: float
    roots: list[str] | None = None
    limit: int | None = None


@dataclass(frozen=True)
class ProcRun(Request[ProcessResult]):
    """One command outside the sessions (argv, no shell), always as an observer."""

    METHOD = "proc.run"
    RESULT = ProcessResult
    argv: list[str]
    timeout: float | None = None
    max_output: int | None = None


@dataclass(frozen=True)
class SessionScreen(Request[ScreenPolicy]):
    """Whether the agent's bash and Python sessions may reach the X display (`screenless.py`)."""

    METHOD = "session.screen"
    RESULT = ScreenPolicy
    allowed: bool


@dataclass(frozen=True)
class ProcFreeze(Request[Frozen]):
    """Stop the agent's processes (with `end`, for good: the run is over)."""

    METHOD = "proc.freeze"
    RESULT = Frozen
    end: bool | None = None


@dataclass(frozen=True)
class ProcThaw(Request[Resumed]):
    METHOD = "proc.thaw"
    RESULT = Resumed
    frozen: list[dict]


REQUESTS: tuple[type[Request], ...] = (
    Ping,
    BashRun,
    BashInterrupt,
    BashRestart,
    PythonRun,
    PythonRestart,
    EditorRun,
    ImageView,
    FileRead,
    FileWrite,
    FileStatRequest,
    FsChanged,
    ProcRun,
    SessionScreen,
    ProcFreeze,
    ProcThaw,
)
"""Every typed method; the server's method table holds each `METHOD` (a test checks both)."""
