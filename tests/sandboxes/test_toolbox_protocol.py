"""The typed toolbox protocol matches the toolbox: every typed method is in the server's table,
and over a real (bubblewrap) sandbox each typed request is answered with exactly the fields of
its result type; a sandbox without a toolbox yet refuses a call in one sentence."""

from __future__ import annotations

import base64
import io
from dataclasses import fields

import pytest
from PIL import Image

from harness.kernel.core import ToolError
from sandboxes import SandboxError
from sandboxes.base import ToolboxSandboxMixin
from sandboxes.toolbox import protocol as p
from sandboxes.toolbox.server import Toolbox
from sandboxes.typed import run

HOME = "/home/user"


def test_every_typed_method_is_in_the_servers_table():
    toolbox = Toolbox()
    try:
        core = {m for m in toolbox.methods if not m.startswith(("desktop.", "browser."))}
        assert {request.METHOD for request in p.REQUESTS} == core
    finally:
        toolbox.close()


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def requests() -> list[p.Request]:
    return [
        p.Ping(),
        p.BashRun("cd /tmp && echo hi", timeout=10),
        p.BashInterrupt(),
        p.BashRestart(),
        p.PythonRun("x = 2\nprint(x * 21)", timeout=10),
        p.PythonRestart(),
        p.FileWrite(f"{HOME}/a.png", png()),
        p.FileRead(f"{HOME}/a.png"),
        p.FileStatRequest(f"{HOME}/a.png"),
        p.ImageView(f"{HOME}/a.png"),
        p.EditorRun("create", f"{HOME}/notes.txt", file_text="one\ntwo\n"),
        p.EditorRun("view", f"{HOME}/notes.txt", view_range=[2, 2]),
        p.FsChanged(0.0, roots=[HOME], limit=10),
        p.ProcRun(["echo", "proc"], timeout=10),
    ]


def test_each_typed_request_gets_exactly_its_result_fields(local_sandbox):
    for request in requests():
        raw = local_sandbox.call(request.METHOD, **request.params())
        names = {f.name for f in fields(request.RESULT)}
        assert set(raw) == names, (request.METHOD, sorted(raw), sorted(names))
        assert isinstance(request.result(raw), request.RESULT)


def test_typed_results_carry_the_values(local_sandbox):
    bash = run(local_sandbox, p.BashRun("cd /tmp && echo hi", timeout=10))
    assert (bash.output.strip(), bash.exit_code, bash.cwd, bash.timed_out) == (
        "hi",
        0,
        "/tmp",
        False,
    )
    assert run(local_sandbox, p.PythonRun("print(6 * 7)")).output.strip() == "42"
    run(local_sandbox, p.FileWrite(f"{HOME}/a.png", png()))
    image = run(local_sandbox, p.ImageView(f"{HOME}/a.png"))
    assert (image.original_width, image.original_height) == (40, 30)
    stat = run(local_sandbox, p.FileStatRequest(f"{HOME}/a.png"))
    assert stat.exists and not stat.is_dir and stat.size > 0
    changed = run(local_sandbox, p.FsChanged(0.0, roots=[HOME]))
    assert f"{HOME}/a.png" in [entry["path"] for entry in changed.paths]
    proc = run(local_sandbox, p.ProcRun(["sh", "-c", "exit 3"]))
    assert proc.exit_code == 3


def test_a_bad_typed_request_is_a_tool_error_the_model_can_read(local_sandbox):
    with pytest.raises(ToolError, match="str_replace|not found|No such|does not exist"):
        run(local_sandbox, p.EditorRun("view", f"{HOME}/missing.txt"))


def test_a_sandbox_without_a_toolbox_refuses_a_call():
    class Bare(ToolboxSandboxMixin):
        id = "bare-1"

        def close(self) -> None:
            pass

    with pytest.raises(SandboxError, match="sandbox bare-1 has no toolbox yet \\(bash.run\\)"):
        run(Bare(), p.BashRun("true"))
