"""StateAct's sandboxes as an MCP server (stdio), for any MCP client.

Tools: sandbox_create / sandbox_close, bash, python, editor, view_image, write_file / read_file,
and `check`, which runs the narration-blind finish gate on an instruction against a sandbox's
current state. A sandbox belongs to the client session that created it; every sandbox is removed
when the server's session ends (stdio: when the client disconnects) and at exit.
"""

from __future__ import annotations

import base64
import json
import tempfile
import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, Image
from mcp.server.mcpserver import MCPServer as FastServer
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from gates import Gate
from harness.apps.sandbox_options import pool_config
from harness.kernel.core import Model, StateActError, ToolError, ToolResult, require_one_of
from harness.kernel.loop import RunScope, RunStats
from harness.kernel.records import RunRecord
from harness.models import ModelConfig, endpoint_provider, make_model
from harness.run.config import RunConfig
from harness.tools import BashTool, EditorTool, PythonTool, ViewImageTool
from sandboxes import BACKENDS, SandboxConfig, open_sandbox
from sandboxes.images.build import IMAGE_NAMES as IMAGES
from sandboxes.pool import WarmPool
from sandboxes.toolbox.protocol import FileRead, FileWrite
from sandboxes.typed import run


@dataclass
class ServerSettings:
    """How `stateact mcp` starts sandboxes and checks them."""

    backend: str = "docker"
    """Default sandbox backend for `sandbox_create`."""
    image: str = "desktop"
    """Default image for `sandbox_create`."""
    gate_model: str | None = None
    """Model spec for `check` when the call names none."""
    model_options: ModelConfig = field(default_factory=ModelConfig)
    """How to call the gate model (endpoint, key, tokens)."""
    memory_mb: int = 4096
    """Memory limit of each sandbox."""
    network: bool = False
    """Whether a client may ask for a sandbox with a network (the operator's --network)."""
    max_sandboxes: int = 4
    """Live sandboxes the server holds at once, over all clients."""
    warm: int = 0
    """Sandboxes of the default backend and image kept started ahead of `sandbox_create`
    (`--warm`, sandboxes/pool.py); they do not count in `max_sandboxes`."""

    def sandbox_config(self, backend: str, image: str, network: bool) -> SandboxConfig:
        """What `sandbox_create` starts (the warm pool keeps the default's)."""
        return SandboxConfig(
            backend=backend, image=image, network=network, memory_mb=self.memory_mb
        )


@dataclass
class Entry:
    """One live sandbox, its owner and what `check` needs to judge it."""

    sandbox: object
    owner: object
    """The client connection that created the sandbox (held, so its identity cannot be reused)."""
    started_at: float
    check_dir: Path
    checks: int = 0


class SandboxPool:
    """Live sandboxes by id; only the session that created a sandbox can use it."""

    def __init__(self, settings: ServerSettings, work_dir: Path):
        self.settings = settings
        self.work_dir = work_dir
        self.entries: dict[str, Entry] = {}
        self.closed: set[str] = set()
        self.lock = threading.Lock()
        self._gate_model: Model | None = None
        self.starting = 0
        default = settings.sandbox_config(settings.backend, settings.image, False)
        warm = pool_config(settings.warm, default, desktop=False)  # no screen in these tools
        self.warm = WarmPool(warm) if warm else None

    def create(self, owner: object, backend: str | None, image: str | None, network: bool) -> str:
        """A new sandbox within the operator's bounds: its backend, its network choice, its
        count."""
        settings = self.settings
        backend = backend or settings.backend
        image = image or settings.image
        require_one_of("backend", backend, BACKENDS, ToolError)
        if backend != settings.backend:
            raise ToolError(
                f"this server runs {settings.backend} sandboxes only; omit `backend` or pass "
                f"{settings.backend!r}."
            )
        if backend == "docker":
            require_one_of("image", image, IMAGES, ToolError)
        if network and not settings.network:
            raise ToolError(
                "this server gives sandboxes no network (its operator did not pass --network); "
                "create the sandbox without `network`."
            )
        with self.lock:
            if len(self.entries) + self.starting >= settings.max_sandboxes:
                raise ToolError(
                    f"this server holds at most {settings.max_sandboxes} live sandboxes; close one "
                    "with sandbox_close first."
                )
            self.starting += 1
        try:
            config = settings.sandbox_config(backend, image, network)
            sandbox = self.warm.take(config) if self.warm else None
            sandbox = sandbox or open_sandbox(config)
            sandbox_id = f"sbx-{uuid.uuid4().hex[:8]}"
            with self.lock:
                self.entries[sandbox_id] = Entry(
                    sandbox, owner, time.time(), self.work_dir / sandbox_id
                )
        finally:
            with self.lock:
                self.starting -= 1
        return sandbox_id

    def get(self, owner: object, sandbox_id: str) -> Entry:
        with self.lock:
            entry = self.entries.get(sandbox_id)
            if entry is None or entry.owner is not owner:
                if sandbox_id in self.closed:
                    raise ToolError(
                        f"sandbox {sandbox_id} is closed; create a new one with sandbox_create."
                    )
                raise ToolError(
                    f"there is no sandbox {sandbox_id!r} in this session; create one "
                    "with sandbox_create."
                )
            return entry

    def close(self, owner: object, sandbox_id: str) -> None:
        entry = self.get(owner, sandbox_id)
        with self.lock:
            self.entries.pop(sandbox_id, None)
            self.closed.add(sandbox_id)
        entry.sandbox.close()

    def close_all(self) -> None:
        if self.warm is not None:
            self.warm.close()
        with self.lock:
            entries, self.entries = list(self.entries.values()), {}
        for entry in entries:
            entry.sandbox.close()

    def gate_model(self, spec: str | None) -> Model:
        """The call's own model (fresh each call), else the server's (kept, so a script spans
        checks)."""
        if spec and spec != self.settings.gate_model:
            if endpoint_provider(spec) is None:
                raise ToolError(
                    f"`model` must be an anthropic/… or openai/… spec, not {spec!r} (script and "
                    "replay models read files on the server's machine)."
                )
            return make_model(spec, self.settings.model_options)
        if not self.settings.gate_model:
            raise ToolError(
                "check needs a gate model: pass `model` (PROVIDER/NAME) or start the "
                "server with --gate-model."
            )
        if self._gate_model is None:
            self._gate_model = make_model(self.settings.gate_model, self.settings.model_options)
        return self._gate_model


def run_check(entry: Entry, instruction: str, model: Model) -> dict:
    """One narration-blind gate round on the sandbox as it is now: passed, gaps and structural
    findings."""
    if not instruction.strip():
        raise ToolError("`instruction` is empty; give the task the sandbox's state should satisfy.")
    entry.checks += 1
    record = RunRecord(entry.check_dir / f"check-{entry.checks}")
    stats = RunStats()
    try:
        gate = Gate(
            instruction,
            entry.sandbox,
            model,
            started_at=entry.started_at,
            initially_present=Gate.present(entry.sandbox, instruction),
            max_turns=RunConfig(model="gate").gate.max_turns,
            scope=RunScope(stats=stats, record=record),
        )
        verdict = gate.judge()
        record.write_gate_round(1, {"round": 1, **verdict.to_json(), "source": verdict.decided_by})
    finally:
        record.close()
    evidence = verdict.evidence
    return {
        "passed": verdict.passed is True,
        "decided": verdict.passed is not None,
        "gaps": verdict.gap_texts,
        "gap_layers": [gap.layer for gap in verdict.gaps],
        "source": verdict.decided_by,
        "structural": evidence.get("structural", []),
        "changed_paths": [c.get("path") for c in evidence.get("changed_paths", [])][:200],
        "cost_usd": round(stats.usage.cost_usd, 6),
        "record": str(record.dir),
    }


def build_server(settings: ServerSettings) -> FastServer:
    """The MCP server with StateAct's sandbox tools registered."""
    work = Path(tempfile.mkdtemp(prefix="stateact-mcp-"))
    pool = SandboxPool(settings, work)

    @asynccontextmanager
    async def lifespan(_server):
        try:
            yield {}
        finally:
            await anyio.to_thread.run_sync(pool.close_all)

    server = FastServer(name="stateact", instructions=INSTRUCTIONS, lifespan=lifespan)
    calls = _Calls(pool)
    _sandbox_tools(server, calls)
    _code_tools(server, calls)
    _file_tools(server, calls)
    server.stateact_pool = pool  # for tests and embedding
    return server


class _Calls:
    """How a tool reaches its client's sandbox: off the event loop, failures as tool errors."""

    def __init__(self, pool: SandboxPool):
        self.pool = pool

    async def blocking(self, function, *args):
        """Run a blocking sandbox call off the event loop; every expected failure becomes a tool
        error."""
        try:
            return await anyio.to_thread.run_sync(function, *args)
        except (ToolError, StateActError, FileNotFoundError) as exc:
            raise MCPToolError(str(exc) or type(exc).__name__) from None

    @staticmethod
    def owner(ctx: Context) -> object:
        # mcp 2.x builds a session object per request around one connection object; mcp 1.x keeps
        # one session per connection. Either way the connection-scoped object identifies the
        # client.
        session = ctx.session
        return getattr(session, "_connection", None) or session

    def tool_call(self, ctx: Context, sandbox_id: str, make_tool, **params):
        def call():
            sandbox = self.pool.get(self.owner(ctx), sandbox_id).sandbox
            result: ToolResult = make_tool(sandbox)(**params)
            if result.error is not None:
                raise ToolError(result.error)
            return result

        return self.blocking(call)


def _sandbox_tools(server: FastServer, calls: _Calls) -> None:
    @server.tool(
        description="Start a sandbox (an isolated machine, user `user`, home /home/user) and "
        "return its id. backend: docker (default) or local; image: base (python3, "
        "office libraries) or desktop (adds LibreOffice, X display, Chromium); "
        "network is off unless asked for."
    )
    async def sandbox_create(
        ctx: Context, backend: str | None = None, image: str | None = None, network: bool = False
    ):
        owner = calls.owner(ctx)
        sandbox_id = await calls.blocking(calls.pool.create, owner, backend, image, network)
        return json.dumps({"sandbox_id": sandbox_id})

    @server.tool(description="Stop a sandbox and remove it with everything in it.")
    async def sandbox_close(ctx: Context, sandbox_id: str):
        await calls.blocking(calls.pool.close, calls.owner(ctx), sandbox_id)
        return f"sandbox {sandbox_id} closed"


def _code_tools(server: FastServer, calls: _Calls) -> None:
    @server.tool(
        description="Run a command in the sandbox's persistent bash shell (cwd and variables "
        "persist). `restart: true` gives a fresh shell."
    )
    async def bash(
        ctx: Context,
        sandbox_id: str,
        command: str | None = None,
        restart: bool = False,
        timeout: float | None = None,
    ):
        return (
            await calls.tool_call(
                ctx, sandbox_id, BashTool, command=command, restart=restart, timeout=timeout
            )
        ).output

    @server.tool(
        description="Run Python 3 code in the sandbox's persistent interpreter; prints and a "
        "trailing expression's value are returned."
    )
    async def python(ctx: Context, sandbox_id: str, code: str, timeout: float | None = None):
        result = await calls.tool_call(ctx, sandbox_id, PythonTool, code=code, timeout=timeout)
        return result.output

    @server.tool(
        description="View, create and edit text files in the sandbox "
        "(str_replace_based_edit_tool semantics): command is view, create, str_replace, insert or "
        "undo_edit; paths are absolute."
    )
    async def editor(
        ctx: Context,
        sandbox_id: str,
        command: str,
        path: str,
        file_text: str | None = None,
        old_str: str | None = None,
        new_str: str | None = None,
        insert_line: int | None = None,
        insert_text: str | None = None,
        view_range: list[int] | None = None,
    ):
        given = {
            "file_text": file_text,
            "old_str": old_str,
            "new_str": new_str,
            "insert_line": insert_line,
            "insert_text": insert_text,
            "view_range": view_range,
        }
        params = {key: value for key, value in given.items() if value is not None}
        return (
            await calls.tool_call(ctx, sandbox_id, EditorTool, command=command, path=path, **params)
        ).output

    @server.tool(
        description="Show an image file from the sandbox (PNG, JPEG, ...), scaled to a "
        "model-friendly size."
    )
    async def view_image(ctx: Context, sandbox_id: str, path: str):
        result = await calls.tool_call(ctx, sandbox_id, ViewImageTool, path=path)
        return [result.output, Image(data=result.image_png, format="png")]


def _file_tools(server: FastServer, calls: _Calls) -> None:
    @server.tool(
        description="Write a file into the sandbox (owned by `user`; parent folders are "
        "created). encoding: text (default, UTF-8) or base64 for binary content."
    )
    async def write_file(
        ctx: Context, sandbox_id: str, path: str, content: str, encoding: str = "text"
    ):
        data = _decode(content, encoding)
        entry = await calls.blocking(calls.pool.get, calls.owner(ctx), sandbox_id)
        request = FileWrite(path, base64.b64encode(data).decode("ascii"))
        await calls.blocking(run, entry.sandbox, request)
        return f"wrote {len(data)} bytes to {path}"

    @server.tool(
        description="Read a file from the sandbox. encoding: text (default; fails on non-UTF-8 "
        "content) or base64."
    )
    async def read_file(ctx: Context, sandbox_id: str, path: str, encoding: str = "text"):
        if encoding not in ("text", "base64"):
            raise MCPToolError("encoding must be `text` or `base64`.")
        entry = await calls.blocking(calls.pool.get, calls.owner(ctx), sandbox_id)
        result = await calls.blocking(run, entry.sandbox, FileRead(path))
        if encoding == "base64":
            return result.data_b64
        try:
            return base64.b64decode(result.data_b64).decode("utf-8")
        except UnicodeDecodeError:
            raise MCPToolError(
                f"{path} is not UTF-8 text; read it with encoding `base64`."
            ) from None

    @server.tool(
        description="Check the sandbox's current state against an instruction with StateAct's "
        "narration-blind finish gate (structural checks, then a fresh model that "
        "inspects a snapshot read-only). Returns passed, gaps and the structural "
        "findings. `model` overrides the server's gate model (PROVIDER/NAME)."
    )
    async def check(ctx: Context, sandbox_id: str, instruction: str, model: str | None = None):
        entry = await calls.blocking(calls.pool.get, calls.owner(ctx), sandbox_id)
        gate_model = await calls.blocking(calls.pool.gate_model, model)
        return json.dumps(await calls.blocking(run_check, entry, instruction, gate_model), indent=2)


def _decode(content: str, encoding: str) -> bytes:
    if encoding == "text":
        return content.encode("utf-8")
    if encoding == "base64":
        try:
            return base64.b64decode(content, validate=True)
        except ValueError:
            raise MCPToolError("`content` is not valid base64.") from None
    raise MCPToolError("encoding must be `text` or `base64`.")


INSTRUCTIONS = (
    "StateAct sandboxes: call sandbox_create first and pass its sandbox_id to every other tool. "
    "Work with bash, python and editor; move files with write_file/read_file; call check with the "
    "task's instruction to have an independent gate judge the sandbox's state. Close sandboxes you "
    "no longer need."
)


def serve(settings: ServerSettings) -> None:
    """Serve over stdio until the client disconnects; every sandbox is removed on the way out."""
    server = build_server(settings)
    try:
        server.run("stdio")
    finally:
        server.stateact_pool.close_all()
