"""`--control screenshot`, the paper's baseline, through the real loop: a scripted model sees real
LibreOffice Calc only through screenshots, clicks the red cell it finds on them, types, saves with
ctrl+s and finishes, and the task's own checker scores the saved workbook 1. The same model asking
for `bash` gets a tool error. The image window keeps only the newest screenshots."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from harness.control.screenshot import REMOVED_IMAGE, ImageWindow
from harness.kernel.core import image_block
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes import SandboxConfig
from tasks.schema import Task
from tests.conftest import require_image
from tests.gates.test_gate_gui_e2e import BOOK, open_book_steps
from tests.subagents.test_subagents_desktop import _computer, _red_point


def the_task(tmp_path) -> Task:
    return Task.model_validate(
        {
            "id": "screenshot-calc",
            "instruction": f"Type 'Zoë 42' into the red cell C3 of {BOOK} and save it as xlsx.",
            "config": open_book_steps(),
            "evaluator": {
                "func": "compare_table",
                "result": {"type": "vm_file", "path": BOOK, "dest": "book.xlsx"},
                "options": {
                    "rules": [
                        {
                            "type": "check_cell",
                            "sheet_idx": "RI0",
                            "coordinate": "C3",
                            "props": {"value": {"method": "eq", "ref": "Zoë 42"}},
                        }
                    ]
                },
            },
            "base_dir": tmp_path,
        }
    )


def _all_images(messages: list[dict]) -> list[Image.Image]:
    """Every screenshot still in the history: the first message's and the tool results'."""
    found = []
    for message in messages:
        for block in message["content"]:
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            for item in inner if isinstance(inner, list) else []:
                if item.get("type") == "image":
                    data = base64.b64decode(item["source"]["data"])
                    found.append(Image.open(io.BytesIO(data)))
    return found


class Baseline:
    """The screenshot agent's script: look until Calc shows the red cell, click it, type, save,
    try `bash` once, then finish."""

    def __init__(self):
        self.step = 0
        self.looks = 0
        self.seen_at = None
        self.tool_names: list[set[str]] = []

    def __call__(self, system, messages, tools):
        self.tool_names.append({tool.name for tool in tools})
        if self.step == 0:
            images = _all_images(messages)
            point = _red_point(images[-1]) if images else None
            # Calc shows the sheet before its toolbars, which then push the cells down: the cell
            # is clicked once two looks in a row find it at the same place.
            if point is None or point != self.seen_at:
                self.seen_at = point
                self.looks += 1
                assert self.looks <= 20, "Calc never showed the red C3 cell in one place"
                return _computer("wait", duration=1)
            self.step = 1
            return _computer("left_click", coordinate=point)
        rest = [
            _computer("type", text="Zoë 42"),
            _computer("key", text="Return"),
            _computer("key", text="ctrl+s"),
            _computer("wait", duration=5),  # a loaded machine saves slowly
            {"tool_calls": [{"name": "bash", "input": {"command": "ls /home/user"}}]},
        ]
        self.step += 1
        if self.step - 2 < len(rest):
            return rest[self.step - 2]
        return {"tool_calls": [{"name": "finish", "input": {"summary": "typed and saved"}}]}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.desktop
def test_screenshot_baseline_types_saves_and_is_scored_1_by_the_checker(tmp_path):
    require_image("desktop")
    config = RunConfig(
        model="script/baseline", control="screenshot", sandbox=SandboxConfig(image="desktop")
    )
    baseline = Baseline()
    result = run_task(
        the_task(tmp_path), config, tmp_path / "run", model=ScriptedModel([baseline] * 40)
    )
    assert result["status"] == "completed", result
    assert result["score"] == 1.0 and result["success"] is True, result
    assert result["options"]["control"] == "screenshot"
    assert json.loads((tmp_path / "run" / "config.json").read_text())["control"] == "screenshot"
    assert result["gate_rounds"] == 0  # the baseline has no gate by default
    assert result["gui_steps"] >= 5 and result["delegations"] == 0
    assert all(names == {"computer", "finish"} for names in baseline.tool_names)
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    results = [
        block
        for event in events
        if event["event"] == "tool_results"
        for block in event["content"]
        if block.get("type") == "tool_result"
    ]
    bash_answer = results[-2]  # the call before finish
    assert bash_answer["is_error"] is True
    assert "Unknown tool 'bash'" in bash_answer["content"][0]["text"]
    first_task = next(event for event in events if event["event"] == "task")
    assert [block["type"] for block in first_task["content"]] == ["image", "text"]


def _history(shots: int) -> list[dict]:
    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, format="PNG")
    messages = [{"role": "user", "content": [image_block(png.getvalue()), {"type": "text"}]}]
    for n in range(shots - 1):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}"}]})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": [image_block(b"x")]}
        messages.append({"role": "user", "content": [result]})
    return messages


class _Loop:
    def __init__(self, messages):
        self.messages = messages


@pytest.mark.parametrize(
    ("shots", "keep", "left"), [(2, 3, 2), (5, 3, 5), (6, 3, 3), (8, 3, 5), (9, 3, 3), (9, 0, 9)]
)
def test_image_window_keeps_the_newest_screenshots_removing_them_in_chunks(shots, keep, left):
    loop = _Loop(_history(shots))
    ImageWindow(keep).before_request(loop)
    remaining = _all_images_count(loop.messages)
    assert remaining == left
    removed_texts = json.dumps(loop.messages).count(REMOVED_IMAGE)
    assert removed_texts == shots - left
    if shots > left:  # the newest one is always kept, the oldest goes first
        assert loop.messages[0]["content"][0] == {"type": "text", "text": REMOVED_IMAGE}
        assert loop.messages[-1]["content"][0]["content"][0]["type"] == "image"


def _all_images_count(messages: list[dict]) -> int:
    return json.dumps(messages).count('"type": "image"')
