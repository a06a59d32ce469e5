"""The density benchmark's tasks and its model: desktop tasks with an application open, and a
scripted model that waits a set time before every turn, as a real model would while it thinks.

Two task kinds, alternating: Calc with a workbook open, and Chrome with a page open. Each asks for
one small answer file, so the run ends through the finish gate (with the desktop open: its
snapshot, its observer sandbox, the open-document check) and the real checker scores it 1.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import openpyxl

from harness.models.scripted import ScriptedModel
from tasks.schema import Task

ANSWER = "/home/user/answer.txt"
BOOK = "/home/user/book.xlsx"
PAGE_PATH = "/home/user/page.html"
WORD = "density"
KINDS = ("calc", "chrome")
PAGE = f"<!doctype html><title>{WORD}</title><h1>{WORD}</h1><p>StateAct density benchmark.</p>\n"
MIN_TURNS = 4
IDLE_COMMAND = "echo look {n}; ls -la /home/user | head -5"
"""A cheap look around, numbered: a model repeating one command would be a stall (and the
harness's stall detector would rightly step in)."""


def _workbook() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet["A1"] = WORD
    for row in range(2, 41):
        sheet.cell(row=row, column=1, value=row)
        sheet.cell(row=row, column=2, value=f"=A{row}*2")
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _answer_checker() -> dict:
    return {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": f"cat {ANSWER}", "shell": True},
        "expected": {"type": "rule", "rules": {"expected": WORD}},
    }


def task_json(kind: str, number: int) -> dict:
    """Task `number` of `kind` (`calc` or `chrome`): the application open, one answer to write."""
    if kind == "calc":
        setup = [
            {"type": "download", "parameters": {"files": [{"url": "book.xlsx", "path": BOOK}]}},
            {"type": "open", "parameters": {"path": BOOK}},
        ]
        instruction = f"{BOOK} is open in Calc. Write the text of its cell A1 to {ANSWER}."
        apps = ["libreoffice_calc"]
    elif kind == "chrome":
        setup = [
            {
                "type": "download",
                "parameters": {"files": [{"url": "page.html", "path": PAGE_PATH}]},
            },
            {"type": "launch", "parameters": {"command": ["google-chrome", f"file://{PAGE_PATH}"]}},
        ]
        instruction = f"{PAGE_PATH} is open in Chrome. Write the page's heading to {ANSWER}."
        apps = ["chrome"]
    else:
        raise ValueError(f"unknown density task kind {kind!r}")
    return {
        "id": f"density-{kind}-{number:03d}",
        "snapshot": "stateact",
        "instruction": instruction,
        "source": "stateact-density-bench",
        "config": setup,
        "related_apps": apps,
        "evaluator": _answer_checker(),
    }


def write_tasks(folder: Path, count: int) -> list[Path]:
    """`count` task files in `folder` (Calc, Chrome, Calc, …) beside the files they open."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "book.xlsx").write_bytes(_workbook())
    (folder / "page.html").write_text(PAGE)
    paths = []
    for number in range(1, count + 1):
        data = task_json(KINDS[(number - 1) % len(KINDS)], number)
        path = folder / f"{data['id']}.json"
        path.write_text(json.dumps(data, indent=2) + "\n")
        paths.append(path)
    return paths


def _call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


def waiting(turn: dict, wait_s: float):
    """`turn`, given only after `wait_s` seconds: the model's thinking time."""

    def play(system, messages, tools) -> dict:
        time.sleep(wait_s)
        return turn

    return play


def agent_turns(turns: int) -> list[dict]:
    """`turns` model turns: looking around (a cheap command), then the answer, then finish."""
    if turns < MIN_TURNS:
        raise ValueError(
            f"the density model needs at least {MIN_TURNS} turns (the finish rule asks for three "
            "steps before finish: looks and the answer)"
        )
    looks = [_call("bash", command=IDLE_COMMAND.format(n=n)) for n in range(1, turns - 1)]
    answer = _call("bash", command=f"printf %s {WORD} > {ANSWER}")
    return [*looks, answer, _call("finish", summary=f"wrote {WORD} to {ANSWER}")]


class DensityModels:
    """The per-task model factories the suite runner takes (a fresh scripted model per task)."""

    def __init__(self, wait_s: float, turns: int):
        self.wait_s = wait_s
        self.turns = turns

    def agent(self, task: Task) -> ScriptedModel:
        played = [waiting(turn, self.wait_s) for turn in agent_turns(self.turns)]
        return ScriptedModel(played, name="script/density")

    def gate(self, task: Task) -> ScriptedModel:
        verdict = waiting(_call("verdict", passed=True, gaps=[]), self.wait_s)
        return ScriptedModel([verdict] * 3, name="script/density-gate")
