"""Differential cases of the document, slide, general and media families through the command line:
`stateact check` on a task file built from each case gives OSWorld's verdict. (Every case of every
family is also scored directly by `test_osworld_fidelity.py`.)

Each family folder under `tests/osworld_cases/` holds one folder of input files per case and a
`cases.json` whose scores came from running OSWorld's metric functions on those files (outside
the project). A `result`/`expected` naming a file of the case folder is passed as its path (a list
of names as a list of paths); any other value is passed as is. A metric that raises scores 0, as in
`tasks.evaluate`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main

CASES_DIR = Path(__file__).parents[2] / "osworld_cases"
FAMILIES = ("docs", "slides", "general", "media")


def load_cases() -> list[tuple[str, dict]]:
    found = []
    for family in FAMILIES:
        listing = CASES_DIR / family / "cases.json"
        if listing.is_file():
            found += [(family, case) for case in json.loads(listing.read_text())]
    return found


CASES = load_cases()


def resolve(value, folder: Path):
    """A file name of the case folder becomes its path; anything else stays as it is."""
    if isinstance(value, str) and (folder / value).is_file():
        return str(folder / value)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and (folder / v).is_file() for v in value)
    ):
        return [str(folder / v) for v in value]
    return value


def is_case_file(value, folder: Path) -> bool:
    return isinstance(value, str) and (folder / value).is_file()


def as_task(family: str, case: dict, root: Path) -> dict | None:
    """The case as a task file whose result (and expected file) are read from the machine under
    `root`; None for cases a task file cannot express (inline results, lists of files)."""
    folder = CASES_DIR / family / case["id"]
    if not is_case_file(case["result"], folder):
        return None
    evaluator = {"func": case["metric"], "options": case["options"]}

    def place(name: str, side: str) -> dict:
        target = root / "home/user" / side / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / name, target)
        return {"type": "vm_file", "path": f"/home/user/{side}/{name}", "dest": name}

    evaluator["result"] = place(case["result"], "result")
    expected = case["expected"]
    if is_case_file(expected, folder):
        evaluator["expected"] = place(expected, "expected")
    elif isinstance(expected, list) and any(is_case_file(v, folder) for v in expected):
        return None
    elif expected is not None:
        evaluator["expected"] = {"type": "rule", "rules": expected}
    return {
        "id": f"{family}-{case['id']}",
        "instruction": "-",
        "config": [],
        "evaluator": evaluator,
    }


def test_stateact_check_reproduces_the_verdicts(tmp_path, capsys):
    """`stateact check` on a task file per case (file results) prints OSWorld's score."""
    checked = 0
    for family, case in CASES:
        root = tmp_path / f"{family}-{case['id']}"
        task = as_task(family, case, root)
        if task is None:
            continue
        task_file = root / "task.json"
        task_file.write_text(json.dumps(task))
        assert main(["check", str(task_file), "--root", str(root)]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["score"] == pytest.approx(case["score"], abs=1e-6), case["id"]
        checked += 1
    assert checked >= 300
