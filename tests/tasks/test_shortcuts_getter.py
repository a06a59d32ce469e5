"""shortcuts_on_desktop: the desktop's .desktop files as {path: text}, from a --root folder and
from a live sandbox, scored by is_shortcut_on_desktop with the public task's rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.evaluate import evaluate
from tasks.getters import GetterContext, RootDirSource, SandboxSource, run_getter
from tasks.schema import load_task
from tests.conftest import OSWORLD_EXAMPLES

GAME = "[Desktop Entry]\nType=Application\nName=Play Puzzle Game 2048\nExec=google-chrome x\n"
TASK_ID = "35253b65-1c19-4304-8aa4-6884b8218fc0"


def context(source, tmp_path: Path) -> GetterContext:
    return GetterContext(source=source, cache_dir=None, work_dir=tmp_path / "work", task=None)


def test_from_a_root_folder_only_desktop_files(tmp_path):
    desktop = tmp_path / "root/home/user/Desktop"
    desktop.mkdir(parents=True)
    (desktop / "game.desktop").write_text(GAME)
    (desktop / "notes.txt").write_text("Name=Play Puzzle Game 2048\n")
    (desktop / "link.desktop").symlink_to("/etc/passwd")
    found = run_getter(
        {"type": "shortcuts_on_desktop"}, context(RootDirSource(tmp_path / "root"), tmp_path)
    )
    assert found == {"/home/user/Desktop/game.desktop": GAME}
    empty = run_getter({"type": "shortcuts_on_desktop"}, context(RootDirSource(tmp_path), tmp_path))
    assert empty == {}


def test_the_public_task_scores_the_shortcut(tmp_path):
    matches = list(OSWORLD_EXAMPLES.glob(f"*/{TASK_ID}.json"))
    if not matches:
        pytest.skip("the OSWorld task files are not here")
    evaluator = json.loads(matches[0].read_text())["evaluator"]
    evaluator = {k: v for k, v in evaluator.items() if k != "postconfig"}
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"id": TASK_ID, "instruction": "x", "evaluator": evaluator}))
    task = load_task(path)
    for name, text, expected in (("good", GAME, 1.0), ("bad", GAME.replace("2048", "Sudoku"), 0.0)):
        desktop = tmp_path / name / "home/user/Desktop"
        desktop.mkdir(parents=True)
        (desktop / "app.desktop").write_text(text)
        result = evaluate(
            task, RootDirSource(tmp_path / name), cache_dir=None, work_dir=tmp_path / f"w{name}"
        )
        assert result.score == expected, result


@pytest.mark.docker
def test_from_a_live_sandbox(base_sandbox, tmp_path):
    script = (
        "mkdir -p ~/Desktop && cd ~/Desktop && rm -rf ./* && "
        f"printf '%b' {json.dumps(GAME)} > 'odd name.desktop' && echo x > other.txt && "
        "mkdir dir.desktop"
    )
    code, output = base_sandbox.exec(["bash", "-c", script])
    assert code == 0, output
    found = run_getter(
        {"type": "shortcuts_on_desktop"}, context(SandboxSource(base_sandbox), tmp_path)
    )
    assert found == {"/home/user/Desktop/odd name.desktop": GAME}
