"""VLC's vlcrc: the vlc_config getter and OSWorld's VLC preference metrics on generated files,
alone and through evaluate() with the public tasks' evaluators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.evaluate import evaluate
from tasks.getters import RootDirSource
from tasks.metrics import get_metric
from tasks.schema import load_task
from tasks.support import unsupported_reason
from tests.conftest import OSWORLD_EXAMPLES

# VLC writes every option, commented out at its default; a changed one loses its '#'.
DEFAULTS = """\
[qt] # Qt interface
#qt-bgcone=1
#qt-max-volume=125
#qt-minimal-view=0
#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29
[core] # core program
#one-instance-when-started-from-file=1
#play-and-exit=0
#input-record-path=
#global-key-play-pause=
#key-play-pause=Space
"""


def vlcrc(tmp_path: Path, **changes: str) -> str:
    text = DEFAULTS
    for key, value in changes.items():
        name = key.replace("_", "-")
        start = text.index(f"#{name}=")
        end = text.index("\n", start)
        text = text[:start] + f"{name}={value}" + text[end:]
    path = tmp_path / f"vlcrc-{len(list(tmp_path.iterdir()))}"
    path.write_text(text)
    return str(path)


def score(name: str, path: str | None, rules: dict) -> float:
    return get_metric(name)(path, rules)


def test_settings_read_the_last_line_or_vlcs_default(tmp_path):
    defaults = vlcrc(tmp_path)
    assert score("check_qt_bgcone", defaults, {"expected_qt_bgcone": 1}) == 1.0
    assert score("check_qt_bgcone", vlcrc(tmp_path, qt_bgcone="0"), {"expected_qt_bgcone": 0})
    assert score(
        "check_qt_max_volume", vlcrc(tmp_path, qt_max_volume="200"), {"expected_qt_max_volume": 200}
    )
    assert not score("check_qt_max_volume", defaults, {"expected_qt_max_volume": 200})
    assert score(
        "check_qt_minimal_view",
        vlcrc(tmp_path, qt_minimal_view="1"),
        {"expected_qt_minimal_view": 1},
    )
    assert score("check_play_and_exit", defaults, {"expected_play_and_exit": 0})
    once = {"expected_one_instance_when_started_from_file": 0}
    changed = vlcrc(tmp_path, one_instance_when_started_from_file="0")
    assert score("check_one_instance_when_started_from_file", changed, once) == 1.0
    assert score("check_one_instance_when_started_from_file", defaults, once) == 0.0
    assert score("check_qt_bgcone", None, {"expected_qt_bgcone": 1}) == 0.0
    with pytest.raises(StateActError, match="expected_qt_bgcone"):
        score("check_qt_bgcone", defaults, {"expected": 1})


def test_hot_key_slider_colours_and_recordings_folder(tmp_path):
    key = {"expected_global_key_play_pause": 1}
    assert score("check_global_key_play_pause", vlcrc(tmp_path, global_key_play_pause="p"), key)
    assert not score("check_global_key_play_pause", vlcrc(tmp_path), key)
    dark = vlcrc(tmp_path, qt_slider_colours="0;0;0;20;20;20;99;99;99;1;2;3")
    assert score("check_qt_slider_colours", dark, {"type": "blackish"}) == 1.0
    assert score("check_qt_slider_colours", vlcrc(tmp_path), {"type": "blackish"}) == 0.0
    match = {"type": "match", "expected_qt_slider_colours": "0;0;0;20;20;20;99;99;99;1;2;3"}
    assert score("check_qt_slider_colours", dark, match) == 1.0
    with pytest.raises(StateActError, match="'match' or 'blackish'"):
        score("check_qt_slider_colours", dark, {"type": "pink"})
    folder = {"recording_file_path": "/home/user/Desktop"}
    desktop = vlcrc(tmp_path, input_record_path="/home/user/Desktop")
    assert score("is_vlc_recordings_folder", desktop, folder) == 1.0
    assert score("is_vlc_recordings_folder", vlcrc(tmp_path), folder) == 0.0


VLC_TASKS = {
    "215dfd39-f493-4bc3-a027-8a97d72c61bf": {"qt_bgcone": "0"},
    "386dbd0e-0241-4a0a-b6a2-6704fba26b1c": {"global_key_play_pause": "Ctrl+Space"},
    "5ac2891a-eacd-4954-b339-98abba077adb": {"play_and_exit": "1"},
    "8ba5ae7a-5ae5-4eab-9fcc-5dd4fe3abf89": {"input_record_path": "/home/user/Desktop"},
    "9195653c-f4aa-453d-aa95-787f6ccfaae9": {"qt_max_volume": "200"},
    "a5bbbcd5-b398-4c91-83d4-55e1e31bbb81": {"qt_minimal_view": "1"},
    "d06f0d4d-2cd5-4ede-8de9-598629438c6e": {"qt_slider_colours": "0;0;0;0;0;0;0;0;0;0;0;0"},
    "f3977615-2b45-4ac5-8bba-80c17dbe2a37": {"one_instance_when_started_from_file": "0"},
}


@pytest.mark.parametrize("task_id", sorted(VLC_TASKS))
def test_public_vlc_tasks_score_a_changed_vlcrc(tmp_path, task_id):
    matches = list(OSWORLD_EXAMPLES.glob(f"*/{task_id}.json"))
    if not matches:
        pytest.skip("the OSWorld task files are not here")
    evaluator = json.loads(matches[0].read_text())["evaluator"]
    evaluator = {k: v for k, v in evaluator.items() if k != "postconfig"}
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"id": task_id, "instruction": "x", "evaluator": evaluator}))
    task = load_task(path)
    assert unsupported_reason(task, None) is None
    changes = VLC_TASKS[task_id]
    # play-and-exit's expected value is 0 in its task: the default passes, the change fails.
    passing = {} if task_id.startswith("5ac2891a") else changes
    failing = changes if task_id.startswith("5ac2891a") else {}
    for name, chosen, expected in (("good", passing, 1.0), ("bad", failing, 0.0)):
        root = tmp_path / name
        config = root / "home/user/.config/vlc"
        config.mkdir(parents=True)
        Path(vlcrc(tmp_path, **chosen)).rename(config / "vlcrc")
        result = evaluate(task, RootDirSource(root), cache_dir=None, work_dir=tmp_path / f"w{name}")
        assert result.score == expected, (name, result)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = evaluate(task, RootDirSource(empty), cache_dir=None, work_dir=tmp_path / "w-none")
    assert result.score == 0.0
