"""`stateact mcp` driven by the official MCP SDK's stdio client: tools listed, a real sandbox
created, files written and read, the gate run through `check` with a scripted gate model, and
nothing left behind."""

from __future__ import annotations

import base64
import io
import json
import os
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from PIL import Image

from tests.conftest import REPO, listed_containers, require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TOOLS = {
    "sandbox_create",
    "sandbox_close",
    "bash",
    "python",
    "editor",
    "view_image",
    "write_file",
    "read_file",
    "check",
}


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def is_error(result) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def managed_containers(owner: str | None = None) -> list:
    containers = listed_containers()
    return [c for c in containers if owner is None or c.labels.get("stateact.owner") == owner]


async def session_flow(gate_script: str) -> dict:
    seen: dict = {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness.cli", "mcp", "--gate-model", gate_script, "--image", "base"],
        cwd=str(REPO),
        env={k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}
        created = await session.call_tool("sandbox_create", {"image": "base"})
        assert not is_error(created), text_of(created)
        sandbox_id = json.loads(text_of(created))["sandbox_id"]

        async def call(name: str, **params):
            return await session.call_tool(name, {"sandbox_id": sandbox_id, **params})

        hostname = text_of(await call("bash", command="hostname")).splitlines()[0]
        seen["owner"] = None
        for container in managed_containers():
            if container.id.startswith(hostname):
                seen["owner"] = container.labels["stateact.owner"]
        seen["write"] = text_of(
            await call("write_file", path="/home/user/notes/todo.txt", content="hello\nworld\n")
        )
        seen["read"] = text_of(await call("read_file", path="/home/user/notes/todo.txt"))
        seen["ls"] = text_of(await call("bash", command="stat -c %U /home/user/notes/todo.txt"))
        await call(
            "write_file",
            path="/home/user/red.png",
            content=base64.b64encode(png_bytes()).decode(),
            encoding="base64",
        )
        seen["read_b64"] = text_of(
            await call("read_file", path="/home/user/red.png", encoding="base64")
        )
        image = await call("view_image", path="/home/user/red.png")
        seen["image_types"] = [block.type for block in image.content]
        seen["python"] = text_of(
            await call("python", code="print(open('/home/user/notes/todo.txt').read().split())")
        )
        edited = await call(
            "editor",
            command="str_replace",
            path="/home/user/notes/todo.txt",
            old_str="world",
            new_str="there",
        )
        seen["edited"] = (
            is_error(edited),
            text_of(await call("read_file", path="/home/user/notes/todo.txt")),
        )
        bad_edit = await call(
            "editor",
            command="str_replace",
            path="/home/user/notes/todo.txt",
            old_str="absent",
            new_str="x",
        )
        seen["bad_edit"] = (is_error(bad_edit), text_of(bad_edit))
        passed = await call(
            "check", instruction="Write a to-do list into /home/user/notes/todo.txt."
        )
        seen["check_pass"] = json.loads(text_of(passed))
        missing = await call("check", instruction="Save the report as /home/user/report.docx.")
        seen["check_missing"] = json.loads(text_of(missing))
        seen["close"] = text_of(
            await session.call_tool("sandbox_close", {"sandbox_id": sandbox_id})
        )
        after = await call("bash", command="echo hi")
        seen["after_close"] = (is_error(after), text_of(after))
        unknown = await session.call_tool("bash", {"sandbox_id": "sbx-nope", "command": "echo"})
        seen["unknown"] = (is_error(unknown), text_of(unknown))
        # A second sandbox left open: the server must remove it when the session ends.
        seen["left_open"] = json.loads(
            text_of(await session.call_tool("sandbox_create", {"image": "base"}))
        )["sandbox_id"]
    return seen


def test_mcp_client_session_end_to_end(tmp_path):
    require_image("base")
    gate = tmp_path / "gate.json"
    gate.write_text(
        json.dumps(
            [
                {
                    "tool_calls": [
                        {"name": "bash", "input": {"command": "cat /home/user/notes/todo.txt"}}
                    ]
                },
                {"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]},
            ]
        )
    )
    seen = anyio.run(session_flow, f"script/{gate}")
    assert seen["tools"] == TOOLS
    assert seen["read"] == "hello\nworld\n" and "12 bytes" in seen["write"]
    assert seen["ls"].splitlines()[0] == "user"
    assert base64.b64decode(seen["read_b64"]) == png_bytes()
    assert seen["image_types"] == ["text", "image"]
    assert "['hello', 'world']" in seen["python"]
    assert seen["edited"] == (False, "hello\nthere\n")
    assert seen["bad_edit"][0] is True and "absent" in seen["bad_edit"][1]
    assert seen["check_pass"]["passed"] is True and seen["check_pass"]["gaps"] == []
    assert any(
        f["path"] == "/home/user/notes/todo.txt" and f["ok"]
        for f in seen["check_pass"]["structural"]
    )
    assert (
        seen["check_missing"]["passed"] is False and seen["check_missing"]["source"] == "structural"
    )
    assert "/home/user/report.docx" in seen["check_missing"]["gaps"][0]
    assert seen["after_close"][0] is True and "is closed" in seen["after_close"][1]
    assert seen["unknown"][0] is True and "no sandbox 'sbx-nope'" in seen["unknown"][1]
    assert seen["owner"], "the sandbox's container was not found"
    assert managed_containers(seen["owner"]) == []  # no container of that server is left behind
