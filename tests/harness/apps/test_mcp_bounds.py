"""`stateact mcp`: the operator's flags bound what a client may choose (backend, network, how many
live sandboxes, which gate model) — asking for more is a tool error, never a widened sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import REPO, require_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def is_error(result) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def bounded_session(host_file: str) -> dict:
    seen: dict = {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness.cli", "mcp", "--image", "base", "--max-sandboxes", "1"],
        cwd=str(REPO),
        env={k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def ask(tool: str, **arguments) -> tuple[bool, str]:
            result = await session.call_tool(tool, arguments)
            return is_error(result), text_of(result)

        seen["other_backend"] = await ask("sandbox_create", backend="local")
        seen["network"] = await ask("sandbox_create", network=True)
        first = await ask("sandbox_create")
        seen["first"] = first
        sandbox_id = json.loads(first[1])["sandbox_id"]
        seen["second"] = await ask("sandbox_create")
        seen["script_model"] = await ask(
            "check", sandbox_id=sandbox_id, instruction="x", model=f"script/{host_file}"
        )
        seen["replay_model"] = await ask(
            "check", sandbox_id=sandbox_id, instruction="x", model="replay//etc"
        )
        seen["network_inside"] = await ask(
            "bash", sandbox_id=sandbox_id, command="ls /sys/class/net"
        )
        await ask("sandbox_close", sandbox_id=sandbox_id)
        again = await ask("sandbox_create")
        seen["after_close"] = again
        await ask("sandbox_close", sandbox_id=json.loads(again[1])["sandbox_id"])
    return seen


def test_a_client_cannot_widen_the_operators_bounds(tmp_path):
    require_image("base")
    host_file = tmp_path / "host-secret.json"
    host_file.write_text('["host secret 51c2"]')
    seen = anyio.run(bounded_session, str(host_file))
    assert seen["other_backend"][0] and "docker sandboxes only" in seen["other_backend"][1]
    assert seen["network"][0] and "no network" in seen["network"][1]
    assert not seen["first"][0]
    assert seen["second"][0] and "at most 1 live sandboxes" in seen["second"][1]
    for key in ("script_model", "replay_model"):
        assert seen[key][0] and "anthropic/" in seen[key][1], seen[key]
        assert "host secret" not in seen[key][1]
    assert seen["network_inside"][1].split()[0] == "lo" and "eth0" not in seen["network_inside"][1]
    assert not seen["after_close"][0]


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--max-sandboxes", "0"], "--max-sandboxes must be at least 1"),
        (["--api-key", "sk-some-key-123456"], "belong to the gate model's provider"),
        (["--base-url", "http://127.0.0.1:9", "--gate-model", "script/x.json"], "belong to"),
    ],
)
def test_bad_server_flags_are_one_sentence(flags, message):
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "mcp", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
