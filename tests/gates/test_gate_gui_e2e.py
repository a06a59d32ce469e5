"""`stateact run` end to end: a scripted main model hands the edit of an open workbook to the GUI
specialist (scripted computer actions on the real LibreOffice); the gate asks the running office
whether the document holds unsaved changes. Saved and left open passes at round 1; the same edit
left unsaved is rejected naming the path and the unsaved state."""

from __future__ import annotations

import json
import shlex

import openpyxl
import pytest

from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.runner import run_task
from sandboxes import SandboxConfig
from tasks.schema import Task
from tests.conftest import require_image
from tests.subagents.test_subagents_desktop import _computer, _images, _red_point

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

BOOK = "/home/user/book.xlsx"
MAKE_BOOK = (
    "import openpyxl\nfrom openpyxl.styles import PatternFill\nbook = openpyxl.Workbook()\n"
    "book.active['A1'] = 'Name'\n"
    "book.active['C3'].fill = PatternFill('solid', fgColor='FF0000')\n"
    f"book.save({BOOK!r})\n"
)
# The person at this machine turned off the keep-format question (Tools > Options > Load/Save).
NO_FORMAT_QUESTION = (
    '<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" '
    'oor:op="fuse"><value>false</value></prop></item>'
)
PROFILE = "/home/user/.config/libreoffice/4/user/registrymodifications.xcu"
# The main agent's shell has no display (it belongs to the GUI specialist), and the setup's open
# step returns once Calc's window bears the book's name: the agent only looks at the files.
LOOK_AROUND = "ls -la /home/user"


def open_book_steps() -> list[dict]:
    """The setup of the Calc tests: no keep-format question, BOOK made and open in Calc."""
    profile = f"sed -i 's#</oor:items>#{NO_FORMAT_QUESTION}</oor:items>#' {PROFILE}"
    return [
        {"type": "execute", "parameters": {"command": profile}},
        {"type": "execute", "parameters": {"command": f"python3 -c {shlex.quote(MAKE_BOOK)}"}},
        {"type": "open", "parameters": {"path": BOOK}},
    ]


def the_task(tmp_path) -> Task:
    return Task.model_validate(
        {
            "id": "gui-gate",
            "instruction": f"Type 'Zoë 42' into the red cell C3 of {BOOK} and save it as xlsx.",
            "config": open_book_steps(),
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )


class Player:
    """Plays the main agent and the GUI specialist from one script: which one is asking is told by
    the tools it was given, as a model would know its own role."""

    def __init__(self, save: bool):
        self.save = save
        self.main_step = 0
        self.gui_step = 0
        self.looks = 0

    def __call__(self, system, messages, tools):
        names = {tool.name for tool in tools}
        return self.gui(messages) if "computer" in names else self.main()

    def main(self) -> dict:
        self.main_step += 1
        saving = "then save it with ctrl+s" if self.save else "(do not save yet)"
        script = {
            1: ("bash", {"command": LOOK_AROUND}),
            2: (
                "delegate",
                {"agent": "gui", "task": f"Type 'Zoë 42' into the red cell C3 {saving}."},
            ),
            3: ("bash", {"command": f"ls -la {BOOK}"}),
        }
        name, params = script.get(self.main_step, ("finish", {"summary": "typed and saved"}))
        return {"tool_calls": [{"name": name, "input": params}]}

    def gui(self, messages) -> dict:
        if self.gui_step == 0:  # look until Calc has drawn the sheet (slow on a loaded machine)
            images = _images(messages)
            point = _red_point(images[-1]) if images else None
            if point is None:
                self.looks += 1
                assert self.looks <= 20, "Calc never showed the red C3 cell"
                return _computer("screenshot")
            self.gui_step = 1
            return _computer("left_click", coordinate=point)
        rest = [_computer("type", text="Zoë 42"), _computer("key", text="Return")]
        if self.save:
            rest.append(_computer("key", text="ctrl+s"))
        self.gui_step += 1
        if self.gui_step - 2 < len(rest):
            return rest[self.gui_step - 2]
        return {"tool_calls": [{"name": "report", "input": {"text": "C3 holds Zoë 42."}}]}


def run(tmp_path, save: bool, after_run=None) -> tuple[dict, ScriptedModel]:
    require_image("desktop")
    config = RunConfig(model="script/player", sandbox=SandboxConfig(image="desktop"))
    config.subagents.enabled = ["gui"]
    player = Player(save)
    gate = ScriptedModel(
        [{"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]}] * 3
    )
    result = run_task(
        the_task(tmp_path),
        config,
        tmp_path / "run",
        model=ScriptedModel([player] * 40),
        gate_model=gate,
        after_run=after_run,
    )
    return result, gate


def gate_round(tmp_path, number: int) -> dict:
    return json.loads((tmp_path / "run" / "gate" / f"round-{number}.json").read_text())


def test_gui_typed_saved_and_still_open_workbook_passes_at_round_1(tmp_path):
    saved = {}

    def read_book(sandbox):
        sandbox.copy_out(BOOK, tmp_path / "book.xlsx")
        saved["C3"] = openpyxl.load_workbook(tmp_path / "book.xlsx").active["C3"].value

    result, gate = run(tmp_path, save=True, after_run=read_book)
    assert saved["C3"] == "Zoë 42"  # the deliverable really holds the GUI-typed edit
    assert result["status"] == "completed", result
    assert result["gate_rounds"] == 1 and result["gate_passed"] is True
    assert result["gui_steps"] >= 5 and result["delegations"] == 1
    first = gate_round(tmp_path, 1)
    assert first["open_documents"]["documents"] == [
        {"path": BOOK, "modified": False, "app": "libreoffice"}
    ]
    assert not any(f["definite"] and not f["ok"] for f in first["structural"])
    assert len(gate.calls) == 1  # the model layer was asked and passed it


def test_the_same_edit_left_unsaved_is_rejected_naming_the_path(tmp_path):
    result, gate = run(tmp_path, save=False)
    assert result["gate_passed"] is False and result["status"] == "gate_rejected", result
    first = gate_round(tmp_path, 1)
    assert first["passed"] is False and first["gap_layers"] == ["structural"]
    assert BOOK in first["gaps"][0] and "unsaved changes" in first["gaps"][0]
    assert first["open_documents"]["documents"][0]["modified"] is True
    assert gate.calls == []  # decided without a model
