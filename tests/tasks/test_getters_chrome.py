"""Chrome profile getters on generated Preferences files, alone and through evaluate()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.evaluate import evaluate
from tasks.getters import GETTERS, GetterContext, RootDirSource, run_getter
from tasks.schema import load_task
from tasks.support import unsupported_reason

EXAMPLES = Path("/work/shared/osworld-tasks/examples")
CHROME_GETTERS = (
    "enable_do_not_track",
    "profile_name",
    "default_search_engine",
    "new_startup_page",
    "chrome_appearance_mode_ui",
    "enable_safe_browsing",
    "data_delete_automacally",
    "find_unpacked_extension_path",
)


def write_task(folder: Path, evaluator: dict) -> Path:
    path = folder / "task.json"
    path.write_text(
        json.dumps({"id": "chrome-1", "instruction": "Set Chrome up.", "evaluator": evaluator})
    )
    return path


def profile(
    root: Path, prefs: dict, browser: str = "google-chrome", name: str = "Preferences"
) -> None:
    path = root / "home/user/.config" / browser / "Default" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(prefs))


def get(tmp_path: Path, getter_type: str):
    task = load_task(write_task(tmp_path, {"func": "exact_match", "result": {"type": getter_type}}))
    ctx = GetterContext(
        task=task,
        source=RootDirSource(tmp_path / "root"),
        cache_dir=None,
        work_dir=tmp_path / "work",
    )
    return run_getter({"type": getter_type}, ctx)


def test_getters_are_registered():
    for name in CHROME_GETTERS:
        assert name in GETTERS


def test_defaults_when_chrome_never_changed_a_setting(tmp_path):
    profile(tmp_path / "root", {})
    assert get(tmp_path, "enable_do_not_track") == "false"
    # OSWorld reads no `safebrowsing.enabled` as off, although Chrome's own default is on.
    assert get(tmp_path, "enable_safe_browsing") == "false"
    assert get(tmp_path, "default_search_engine") == "Google"
    assert get(tmp_path, "new_startup_page") == "true"
    assert get(tmp_path, "chrome_appearance_mode_ui") == "system"
    assert get(tmp_path, "data_delete_automacally") == "false"
    assert get(tmp_path, "profile_name") is None
    assert get(tmp_path, "find_unpacked_extension_path") == []


def test_changed_settings(tmp_path):
    prefs = {
        "enable_do_not_track": True,
        "safebrowsing": {"enabled": False, "enhanced": False},
        "profile": {"name": "Thomas", "default_content_setting_values": {"cookies": 4}},
        "default_search_provider_data": {"template_url_data": {"short_name": "Bing"}},
        "session": {"restore_on_startup": 4, "startup_urls": ["http://funbrain.com/"]},
        "browser": {"theme": {"color_scheme2": 2}},
    }
    profile(tmp_path / "root", prefs, browser="chromium")
    assert get(tmp_path, "enable_do_not_track") == "true"
    assert get(tmp_path, "enable_safe_browsing") == "false"
    assert get(tmp_path, "profile_name") == "Thomas"
    assert get(tmp_path, "default_search_engine") == "Bing"
    assert get(tmp_path, "new_startup_page") == "false"
    assert get(tmp_path, "chrome_appearance_mode_ui") == "dark"
    assert get(tmp_path, "data_delete_automacally") == "true"


# Each verdict below is what OSWorld's own getter (desktop_env/evaluators/getters/chrome.py of
# ljxpython/OSWorldUse @b5007a9, run in a scratch folder on the same Preferences) answers.
OSWORLD_READINGS = [
    # The obsolete key Chromium keeps but ignores is not the engine in use.
    ("default_search_engine", {"default_search_provider": {"name": "Bing"}}, "Google"),
    (
        "default_search_engine",
        {"default_search_provider_data": {"template_url_data": {"keyword": "bing.com"}}},
        "Google",
    ),
    ("new_startup_page", {"session": {"restore_on_startup": 4, "startup_urls": []}}, "false"),
    ("new_startup_page", {"session": {}}, "false"),
    ("new_startup_page", {"session": {"restore_on_startup": 5}}, "true"),
    (
        "data_delete_automacally",
        {"profile": {"default_content_setting_values": {"images": 2}}},
        "true",
    ),
    ("data_delete_automacally", {"profile": {"name": "x"}}, "false"),
    # The one departure: Chromium 156 writes this marker into every untouched profile, where
    # OSWorld's getter would read "true" with nothing done; it reads as absent here (see
    # docs/osworld-fidelity.md), so a do-nothing agent scores 0 as it must.
    (
        "data_delete_automacally",
        {
            "profile": {
                "default_content_setting_values": {"has_migrated_local_network_access": True}
            }
        },
        "false",
    ),
    ("enable_do_not_track", {"enable_do_not_track": 1}, "true"),
    ("enable_safe_browsing", {"safebrowsing": {"enhanced": True}}, "true"),
    ("chrome_appearance_mode_ui", {"extensions": {"theme": {"system_theme": 0}}}, "light"),
    ("chrome_appearance_mode_ui", {"browser": {"theme": {"color_scheme": "dark"}}}, "dark"),
]


@pytest.mark.parametrize(("getter_type", "prefs", "expected"), OSWORLD_READINGS)
def test_getters_read_the_keys_osworld_reads(tmp_path, getter_type, prefs, expected):
    profile(tmp_path / "root", prefs)
    assert get(tmp_path, getter_type) == expected


def test_unpacked_extensions_come_from_both_preference_files(tmp_path):
    root = tmp_path / "root"
    profile(
        root,
        {
            "extensions": {
                "settings": {
                    "abc": {"location": 1, "path": "abc/1.0", "manifest": {"name": "Store"}}
                }
            }
        },
    )
    secure = {
        "extensions": {
            "settings": {"def": {"location": 4, "path": "/home/user/Desktop/helloExtension"}}
        }
    }
    profile(root, secure, name="Secure Preferences")
    assert get(tmp_path, "find_unpacked_extension_path") == ["/home/user/Desktop/helloExtension"]
    assert get(tmp_path, "find_installed_extension_name") == ["Store"]


def test_missing_or_broken_profile_is_one_clear_sentence(tmp_path):
    with pytest.raises(StateActError, match="no Chrome profile"):
        get(tmp_path, "enable_do_not_track")
    path = tmp_path / "root/home/user/.config/google-chrome/Default/Preferences"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(StateActError, match="not valid JSON"):
        get(tmp_path, "profile_name")


@pytest.mark.parametrize(
    ("task_file", "good", "bad"),
    [
        ("chrome/030eeff7-b492-4218-b312-701ec99ee0cc.json", {"enable_do_not_track": True}, {}),
        (
            "chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4.json",
            {
                "default_search_provider_data": {
                    "template_url_data": {"short_name": "Microsoft Bing"}
                }
            },
            {},
        ),
        (
            "chrome/9656a811-9b5b-4ddf-99c7-5117bcef0626.json",
            {"safebrowsing": {"enabled": True}},
            {"safebrowsing": {"enabled": False, "enhanced": False}},
        ),
    ],
)
def test_real_chrome_tasks_score_through_evaluate(tmp_path, task_file, good, bad):
    source = EXAMPLES / task_file
    if not source.is_file():
        pytest.skip("the OSWorld examples are not available")
    task_data = json.loads(source.read_text())
    evaluator = {k: v for k, v in task_data["evaluator"].items() if k != "postconfig"}
    task = load_task(write_task(tmp_path, evaluator))
    assert unsupported_reason(task, None) is None
    for prefs, score in ((good, 1.0), (bad, 0.0)):
        root = tmp_path / f"root{score}"
        profile(root, prefs)
        result = evaluate(
            task, RootDirSource(root), cache_dir=None, work_dir=tmp_path / f"work{score}"
        )
        assert result.score == score, result
