"""`stateact gate` as a user runs it: bad input, a failing --then, and an office document edited
in the running LibreOffice, saved or left unsaved, judged by the model-free layers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from gates.bench.office import office_edit
from tests.conftest import listed_containers, require_image

BOOK = "/home/user/sales.xlsx"
INSTRUCTION = f"Put the total of B1:B3 into B4 of {BOOK} as a formula."


def stateact(*args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "stateact"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def orphans() -> set[str]:
    """Sandboxes whose starting process has ended (each `stateact gate` is such a process)."""
    from sandboxes.lifecycle import owner_is_gone

    listed = listed_containers()
    return {c.id for c in listed if owner_is_gone(c.labels.get("stateact.owner", ""))}


@pytest.fixture
def laid(tmp_path) -> tuple[Path, Path]:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "sum", "instruction": INSTRUCTION, "config": []}))
    root = tmp_path / "root"
    (root / "home" / "user").mkdir(parents=True)
    book = openpyxl.Workbook()
    for row, value in enumerate((3, 4, 5), start=1):
        book.active.cell(row, 2, value)
    book.save(root / "home" / "user" / "sales.xlsx")
    return task, root


@pytest.mark.parametrize(
    "args, sentence",
    [
        (["missing.json", "--root", "."], "task file missing.json does not exist"),
        (["TASK", "--root", "no-such-dir"], "--root no-such-dir is not a folder"),
        (["TASK", "--root", "ROOT", "--gate-model", "bogus/x"], "unknown model provider 'bogus'"),
        (["TASK", "--root", "ROOT", "--image", "nope"], "unknown image 'nope'"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(laid, args, sentence):
    task, root = laid
    args = [str(task) if a == "TASK" else str(root) if a == "ROOT" else a for a in args]
    done = stateact("gate", *args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and sentence in lines[0] and "Traceback" not in done.stderr


def test_a_link_in_the_root_is_refused(laid, tmp_path):
    task, root = laid
    (root / "home" / "user" / "passwd").symlink_to("/etc/passwd")
    done = stateact("gate", str(task), "--root", str(root))
    assert done.returncode == 2 and "symbolic link" in done.stderr


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_unsaved_saved_and_failing_commands(laid):
    require_image("desktop")
    task, root = laid
    before = orphans()
    unsaved = stateact(
        "gate",
        str(task),
        "--root",
        str(root),
        "--then",
        office_edit(BOOK, "cell", "B4", "=SUM(B1:B3)", False),
    )
    assert unsaved.returncode == 0, unsaved.stderr
    verdict = json.loads(unsaved.stdout)
    assert verdict["passed"] is False and verdict["then"]["exit_code"] == 0
    assert [gap["layer"] for gap in verdict["gaps"]] == ["structural"]
    assert BOOK in verdict["gaps"][0]["text"] and "unsaved changes" in verdict["gaps"][0]["text"]

    saved = stateact(
        "gate",
        str(task),
        "--root",
        str(root),
        "--json",
        "--then",
        office_edit(BOOK, "cell", "B4", "=SUM(B1:B3)", True),
    )
    verdict = json.loads(saved.stdout)
    assert saved.returncode == 0 and verdict["passed"] is True and verdict["gaps"] == []
    assert verdict["open_documents"]["documents"] == [
        {"path": BOOK, "modified": False, "app": "libreoffice"}
    ]
    assert BOOK in [c["path"] for c in verdict["changed_paths"]]

    failing = stateact("gate", str(task), "--root", str(root), "--then", "echo half-done; exit 3")
    verdict = json.loads(failing.stdout)
    assert failing.returncode == 0 and verdict["passed"] is True
    assert verdict["then"]["exit_code"] == 3 and "half-done" in verdict["then"]["output"]
    assert "--then exited with 3" in failing.stderr
    assert orphans() <= before  # nothing left running


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_gate_model_decides_what_the_model_free_layers_pass(laid, tmp_path):
    require_image("desktop")
    task, root = laid
    probe = {
        "kind": "xlsx_cells",
        "path": BOOK,
        "cells": ["B4"],
        "expect": {"B4": {"formula": "=SUM(B1:B3)"}},
    }
    script = tmp_path / "gate.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "probe", "input": {"spec": probe}}]},
                {"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]},
            ]
        )
    )
    done = stateact(
        "gate", str(task), "--root", str(root), "--gate-model", f"script/{script}", "--json"
    )
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    # The model passed it, but its own probe found no formula in B4: the probe's false is binding.
    assert verdict["passed"] is False and [g["layer"] for g in verdict["gaps"]] == ["probe"]
    assert "B4" in verdict["gaps"][0]["text"] and verdict["probes"][0]["verdict"] is False
    script.write_text(
        json.dumps(
            [
                {
                    "tool_calls": [
                        {
                            "name": "verdict",
                            "input": {"passed": False, "gaps": [f"{BOOK}: B4 is empty"]},
                        }
                    ]
                }
            ]
        )
    )
    done = stateact("gate", str(task), "--root", str(root), "--gate-model", f"script/{script}")
    verdict = json.loads(done.stdout)
    assert done.returncode == 0 and verdict["gaps"] == [
        {"text": f"{BOOK}: B4 is empty", "layer": "model"}
    ]


FAKE_OFFICE = (
    "setsid python3 -c 'import os, socket, time; s = socket.socket(socket.AF_UNIX); "
    's.bind("/tmp/OSL_PIPE_%d_stateact-uno" % os.getuid()); s.listen(); time.sleep(600)\' '
    "</dev/null >/dev/null 2>&1 & sleep 1; touch '/home/user/.~lock.sales.xlsx#'"
)


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_listener_posing_as_the_office_is_not_asked(laid):
    require_image("desktop")
    task, root = laid
    done = stateact("gate", str(task), "--root", str(root), "--json", "--then", FAKE_OFFICE)
    verdict = json.loads(done.stdout)
    assert done.returncode == 0 and verdict["then"]["exit_code"] == 0
    answer = verdict["open_documents"]
    assert answer["asked"] is False and "not LibreOffice" in answer["reason"]
    assert "python3" in answer["reason"]
    # The lock file is then only a finding for the model layer, which names why.
    lock = [f for f in verdict["structural"] if f["check"] == "open"]
    assert len(lock) == 1 and not lock[0]["definite"] and "not LibreOffice" in lock[0]["detail"]
