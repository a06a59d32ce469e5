"""`stateact run` end to end: the real SDKs over HTTP to local fake providers, a real sandbox, an
xlsx edited through `python`, the finish rule, the gate, scoring and the run record."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from tests.conftest import require_image, stateact
from tests.fakes import FakeAnthropicServer, FakeOpenAIServer

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EDIT_CODE = (
    "import openpyxl\n"
    "wb = openpyxl.load_workbook('/home/user/data.xlsx')\n"
    "wb.active['B1'] = '=SUM(A1:A3)'\n"
    "wb.save('/home/user/data.xlsx')\n"
    "print('saved')"
)
READ_BACK = (
    'python3 -c "import openpyxl; '
    "print(openpyxl.load_workbook('/home/user/data.xlsx').active['B1'].value)\""
)


def make_task(folder: Path) -> Path:
    """A task with an input workbook copied in and a checker on the formula in B1."""
    workbook = openpyxl.Workbook()
    for row, value in enumerate((3, 4, 5), start=1):
        workbook.active.cell(row=row, column=1, value=value)
    workbook.save(folder / "data.xlsx")
    task = {
        "id": "sum-formula",
        "instruction": "In /home/user/data.xlsx, put a formula in B1 that sums A1:A3, and save the "
        "file.",
        "config": [
            {
                "type": "download",
                "parameters": {"files": [{"url": "data.xlsx", "path": "/home/user/data.xlsx"}]},
            }
        ],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": READ_BACK, "shell": True},
            "expected": {"type": "rule", "rules": {"include": ["=SUM(A1:A3)"], "exclude": []}},
        },
    }
    path = folder / "task.json"
    path.write_text(json.dumps(task))
    return path


def calls(*pairs) -> dict:
    return {"tool_calls": [{"name": name, "input": params} for name, params in pairs]}


def agent_script(usage: dict) -> list:
    return [
        {"status": 529, "message": "Overloaded"},
        {"status": 429, "headers": {"retry-after": "1"}, "message": "slow down"},
        {**calls(("finish", {"summary": "done already"})), "usage": usage},
        {
            **calls(("plan", {"items": [{"text": "write B1 formula", "status": "in_progress"}]})),
            "usage": usage,
        },
        {**calls(("python", {"code": EDIT_CODE})), "usage": usage},
        {**calls(("bash", {"command": READ_BACK})), "usage": usage},
        {
            **calls(("str_replace_based_edit_tool", {"command": "view", "path": "/home/user"})),
            "usage": usage,
        },
        {**calls(("finish", {"summary": "B1 sums A1:A3"})), "usage": usage},
        # The gate's turns: a typed probe, then the verdict.
        {
            **calls(
                (
                    "probe",
                    {
                        "spec": {
                            "kind": "xlsx_cells",
                            "path": "/home/user/data.xlsx",
                            "expect": {"B1": {"formula": "=SUM(A1:A3)"}},
                        }
                    },
                )
            ),
            "usage": usage,
        },
        {**calls(("verdict", {"passed": True, "gaps": []})), "usage": usage},
    ]


def tool_result_texts(request: dict) -> list[str]:
    texts = []
    for message in request["json"]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                texts += (
                    [c.get("text", "") for c in content]
                    if isinstance(content, list)
                    else [str(content)]
                )
    return texts


def test_anthropic_run_against_a_fake_messages_api(tmp_path):
    require_image("base")
    task = make_task(tmp_path)
    usage = {
        "input_tokens": 1000,
        "output_tokens": 100,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 500,
    }
    with FakeAnthropicServer(agent_script(usage)) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key"}
        done = stateact(
            "run",
            str(task),
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--image",
            "base",
            "--out",
            str(tmp_path / "run"),
            env=env,
        )
        requests = server.completion_requests()
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["status"] == "completed" and result["score"] == 1.0 and result["success"] is True
    assert result["gate_rounds"] == 1 and result["gate_passed"] is True
    assert result["main_turns"] == 6 and result["model_turns"] == 8
    # 8 billed turns at Sonnet prices: $3/M input, $15/M output, cache reads 0.1x, cache writes
    # 1.25x.
    per_turn = (1000 * 3 + 100 * 15 + 2000 * 0.3 + 500 * 3.75) / 1e6
    assert result["cost_usd"] == pytest.approx(8 * per_turn, rel=1e-6)
    assert len(requests) == 10  # two failed attempts were retried
    assert any("finish is refused" in text for text in tool_result_texts(requests[3]))
    tools = {tool.get("type", "custom"): tool["name"] for tool in requests[2]["json"]["tools"]}
    assert tools.get("bash_20250124") == "bash"
    assert tools.get("text_editor_20250728") == "str_replace_based_edit_tool"
    gate_request = json.dumps(requests[8]["json"])
    assert "B1 sums A1:A3" not in gate_request and "write B1 formula" not in gate_request
    trajectory = (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in trajectory)
    assert (tmp_path / "run" / "gate" / "round-1.json").exists()


def test_openai_compatible_run_with_malformed_and_unknown_calls(tmp_path):
    require_image("base")
    task = make_task(tmp_path)
    script = [
        {"tool_calls": [{"name": "python", "arguments": "{not json"}]},
        {"tool_calls": [{"name": "teleport", "arguments": "{}"}]},
        {"tool_calls": [{"name": "python", "arguments": json.dumps({"code": EDIT_CODE})}]},
        {"tool_calls": [{"name": "bash", "arguments": json.dumps({"command": READ_BACK})}]},
        {"tool_calls": [{"name": "finish", "arguments": json.dumps({"summary": "done"})}]},
        {
            "tool_calls": [
                {"name": "verdict", "arguments": json.dumps({"passed": True, "gaps": []})}
            ]
        },
    ]
    with FakeOpenAIServer(script) as server:
        done = stateact(
            "run",
            str(task),
            "--model",
            "openai/qwen3-9b",
            "--base-url",
            server.base_url,
            "--image",
            "base",
            "--out",
            str(tmp_path / "run"),
        )
        requests = server.completion_requests()
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["status"] == "completed" and result["score"] == 1.0
    tool_messages = [m["content"] for m in requests[2]["json"]["messages"] if m["role"] == "tool"]
    assert any("not a JSON object" in text for text in tool_messages)
    assert any("Unknown tool 'teleport'" in text for text in tool_messages)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--model", "gpt4"], {}, "invalid model spec"),
        (["--model", "anthropic/claude-sonnet-4-5"], {}, "ANTHROPIC_API_KEY is not set"),
        (["--model", "script/does-not-exist.json"], {}, "does-not-exist.json"),
    ],
)
def test_bad_model_specs_are_one_sentence(tmp_path, args, env, message):
    task = make_task(tmp_path)
    done = stateact("run", str(task), *args, "--out", str(tmp_path / "run"), env=env)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_task_file_that_is_not_json(tmp_path):
    bad = tmp_path / "task.json"
    bad.write_text("{ nope")
    done = stateact("run", str(bad), "--model", "script/x.json")
    assert done.returncode == 2 and "JSON" in done.stderr and "Traceback" not in done.stderr
