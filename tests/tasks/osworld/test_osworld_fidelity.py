"""StateAct's metrics give OSWorld's verdicts on the differential cases in tests/osworld_cases.

Each `tests/osworld_cases/<family>/cases.json` lists cases whose `score` came from running
OSWorld's own metric function on the files in `<family>/<id>/` (outside this project). A `result`
or `expected` that names a file of the case folder (or a list of such names) is passed as that
file's path, also when the file is absent on purpose and named `result…`/`expected…`; anything
else is passed inline, as OSWorld's task JSON gives it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import tasks.metrics  # noqa: F401  (registers every metric)
from harness.cli import main
from tasks.metrics.registry import METRICS
from tests.conftest import require_image

CASES_DIR = Path(__file__).parents[2] / "osworld_cases"
MISSING_FILE = re.compile(r"^(result|expected)[\w-]*\.\w+$")
"""A file name for a case about a missing file (named like the case's other files)."""


def load_cases() -> list[tuple[str, dict]]:
    found = []
    for index in sorted(CASES_DIR.glob("*/cases.json")):
        for case in json.loads(index.read_text()):
            found.append((index.parent.name, case))
    return found


CASES = load_cases()


def is_file_ref(folder: Path, value: Any) -> bool:
    if isinstance(value, str):
        return (folder / value).is_file() or bool(MISSING_FILE.match(value))
    return False


def resolve(folder: Path, value: Any) -> Any:
    """A file name of the case becomes its path; a list of file names a list of paths."""
    if is_file_ref(folder, value):
        return str(folder / value)
    if isinstance(value, list) and value and all(is_file_ref(folder, v) for v in value):
        return [str(folder / v) for v in value]
    return value


def stateact_score(family: str, case: dict) -> float:
    """The metric's value as `stateact check` would record it: a failure scores 0."""
    folder = CASES_DIR / family / case["id"]
    fn = METRICS[case["metric"]]
    result = resolve(folder, case["result"])
    try:
        if case["expected"] is None:
            return float(fn(result, **case["options"]))
        return float(fn(result, resolve(folder, case["expected"]), **case["options"]))
    except Exception:  # noqa: BLE001 -- the evaluator turns a metric's failure into 0
        return 0.0


def test_cases_are_there_and_scored() -> None:
    assert len(CASES) >= 220
    unscored = [c["id"] for _, c in CASES if not isinstance(c.get("score"), int | float)]
    assert not unscored, f"cases without an OSWorld verdict: {unscored[:5]}"


@pytest.mark.parametrize(("family", "case"), CASES, ids=[f"{f}/{c['id']}" for f, c in CASES])
def test_metric_agrees_with_osworld(family: str, case: dict) -> None:
    if case["metric"] == "check_python_file_by_test_suite":
        require_image("base")  # the agent's code runs only in a throwaway container
    assert stateact_score(family, case) == pytest.approx(case["score"], abs=1e-6)


def getter_for(folder: Path, names: list[str], sandbox: bool, gives: list[int]) -> dict:
    """A task getter that fetches `names` (all files of one side) and hands over `gives`."""
    if sandbox:
        spec = {"type": "vm_file", "path": [f"/home/user/{n}" for n in names]}
    else:
        spec = {"type": "cloud_file", "path": names}
    return {**spec, "dest": names, "multi": True, "gives": gives}


def side_files(folder: Path, value: Any, prefix: str) -> tuple[list[str], list[int]] | None:
    """The files one side fetches (its named files first, then companions such as CSV exports)."""
    named = value if isinstance(value, list) else [value]
    if not all(isinstance(n, str) and (folder / n).is_file() for n in named):
        return None
    extra = sorted(
        p.name for p in folder.iterdir() if p.name.startswith(prefix) and p.name not in named
    )
    return [*named, *extra], list(range(len(named)))


SPREADSHEET_FAMILIES = ("table", "table-libreoffice", "csv")


def cli_sample() -> list[tuple[str, dict]]:
    """Every twelfth spreadsheet case whose files all exist (a task getter cannot name a missing
    gold file); the other families go through the command line in test_osworld_fidelity_docs.py."""
    chosen = []
    spreadsheets = [(f, c) for f, c in CASES if f in SPREADSHEET_FAMILIES]
    for family, case in spreadsheets[::12]:
        folder = CASES_DIR / family / case["id"]
        if side_files(folder, case["result"], "result") is None:
            continue
        if case["expected"] is not None and side_files(folder, case["expected"], "exp") is None:
            continue
        chosen.append((family, case))
    return chosen


@pytest.mark.parametrize(
    ("family", "case"), cli_sample(), ids=[f"{f}/{c['id']}" for f, c in cli_sample()]
)
def test_stateact_check_reproduces_osworld(family: str, case: dict, tmp_path: Path, capsys) -> None:
    folder = CASES_DIR / family / case["id"]
    root = tmp_path / "root"
    (root / "home" / "user").mkdir(parents=True)
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    result_names, result_gives = side_files(folder, case["result"], "result")
    for name in result_names:
        shutil.copy(folder / name, root / "home" / "user" / name)
    evaluator = {
        "func": case["metric"],
        "result": getter_for(folder, result_names, True, result_gives),
        "options": case["options"],
    }
    if case["expected"] is not None:
        names, gives = side_files(folder, case["expected"], "exp")
        for name in names:
            shutil.copy(folder / name, task_dir / name)
        evaluator["expected"] = getter_for(folder, names, False, gives)
    task = {"id": case["id"], "instruction": "differential case", "evaluator": evaluator}
    (task_dir / "task.json").write_text(json.dumps(task))
    # The command's own entry point in-process: a process per case would cost seconds of imports.
    code = main(["check", str(task_dir / "task.json"), "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["score"] == pytest.approx(case["score"], abs=1e-6)
