"""Task loading, the dry-run verdicts over OSWorld's 369 tasks, cache naming and setup's pure
parts."""

from __future__ import annotations

import collections
import json
import uuid
from datetime import date
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.cache import cache_name, resolve_source
from tasks.relative_time import resolve_phrase, rule_relative_time
from tasks.schema import load_task
from tasks.setup import (
    default_placeholders,
    open_command,
    substitute_placeholders,
    window_activate_script,
)
from tasks.support import dry_run_record, unsupported_reason

OSWORLD = Path("/work/shared/osworld-tasks/examples")
OSWORLD_FILES = sorted(OSWORLD.glob("*/*.json"))


def write_task(folder: Path, **fields) -> Path:
    data = {
        "id": "t1",
        "instruction": "Do it.",
        "config": [],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "rule", "rules": 1},
            "expected": {"type": "rule", "rules": {"expected": 1}},
        },
    }
    data.update(fields)
    path = folder / "t1.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.skipif(not OSWORLD_FILES, reason="OSWorld task files are not present")
def test_all_osworld_tasks_load_and_get_a_verdict():
    assert len(OSWORLD_FILES) == 369
    counts: collections.Counter[str] = collections.Counter()
    for path in OSWORLD_FILES:
        task = load_task(path)
        assert task.id == path.stem and task.base_dir == path.parent.resolve()
        record = dry_run_record(path, None)
        assert record["domain"] == path.parent.name and record["id"] == path.stem
        assert record["runnable"] == ("reason" not in record)
        counts[record.get("reason", "runnable").split(":")[0]] += 1
    print("\ndry-run verdicts over the OSWorld tasks:")
    for reason, count in counts.most_common():
        print(f"  {count:4d}  {reason}")
    assert counts["runnable"] > 20
    assert counts["file not in the cache dir"] > 100
    assert counts["needs the internet"] >= 52


def test_task_without_id_uses_the_file_stem_and_keeps_extra_fields(tmp_path):
    path = write_task(tmp_path, id=None, weird_new_field={"a": 1})
    task = load_task(path)
    assert task.id == "t1"
    assert task.model_extra["weird_new_field"] == {"a": 1}
    assert "base_dir" not in task.model_dump()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"id": "x", "evaluator": {"func": "exact_match"}}', "no 'instruction'"),
        ('{"instruction": "x", "evaluator": {"func": 3}}', "evaluator.func"),
        (
            '{"instruction": "x", "evaluator": {"func": "f"}, "config": [{"parameters": {}}]}',
            "config.0.type",
        ),
        ('{"instruction": "x", "evaluator": {"func": "f", "conj": "xor"}}', "evaluator.conj"),
    ],
)
def test_bad_task_files_raise_one_sentence(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(StateActError, match=message) as info:
        load_task(path)
    assert "\n" not in str(info.value)


def test_dry_run_of_a_broken_file_never_raises(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{")
    record = dry_run_record(path, None)
    assert record["runnable"] is False and record["reason"].startswith("broken task file")
    assert dry_run_record(tmp_path / "absent.json", None)["runnable"] is False


def test_unsupported_reasons(tmp_path):
    url = "https://example.org/files/in%20put.xlsx"
    step = {
        "type": "download",
        "parameters": {"files": [{"url": url, "path": "/home/user/in put.xlsx"}]},
    }
    task = load_task(write_task(tmp_path, config=[step]))
    assert unsupported_reason(task, tmp_path) == f"file not in the cache dir: {url}"
    (tmp_path / cache_name(url)).write_bytes(b"x")
    assert unsupported_reason(task, tmp_path) is None
    assert unsupported_reason(load_task(write_task(tmp_path, proxy=True)), None).startswith(
        "needs the internet"
    )
    tabs = {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://www.google.com"]}}
    assert "google.com" in unsupported_reason(load_task(write_task(tmp_path, config=[tabs])), None)
    local_tabs = {
        "type": "chrome_open_tabs",
        "parameters": {"urls_to_open": ["http://127.0.0.1:8000/"]},
    }
    # Chrome's tabs open inside the sandbox's own browser: a local page needs nothing more.
    assert unsupported_reason(load_task(write_task(tmp_path, config=[local_tabs])), None) is None
    login = {"type": "login", "parameters": {}}
    assert unsupported_reason(load_task(write_task(tmp_path, config=[login])), None).startswith(
        "needs an account"
    )
    evaluator = {"func": ["exact_match", "no_such_metric"], "result": [None, None]}
    assert (
        unsupported_reason(load_task(write_task(tmp_path, evaluator=evaluator)), None)
        == "metric not implemented: no_such_metric"
    )
    evaluator = {"func": "exact_match", "result": {"type": "no_such_getter"}}
    assert (
        unsupported_reason(load_task(write_task(tmp_path, evaluator=evaluator)), None)
        == "getter not implemented: no_such_getter"
    )
    website = {"type": "info_from_website", "url": "https://scholar.google.com/", "infos": []}
    evaluator = {"func": "exact_match", "result": website}
    assert (
        unsupported_reason(load_task(write_task(tmp_path, evaluator=evaluator)), None)
        == "needs the internet: the info_from_website getter reads a live web page"
    )
    # A page served inside the sandbox needs no network.
    evaluator["result"] = {**website, "url": "http://127.0.0.1:8000/profile.html"}
    assert unsupported_reason(load_task(write_task(tmp_path, evaluator=evaluator)), None) is None
    evaluator = {
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "/a.xlsx"},
        "options": {"rules": [{"type": "no_such_rule"}]},
    }
    assert "no_such_rule" in unsupported_reason(
        load_task(write_task(tmp_path, evaluator=evaluator)), None
    )


def test_cache_naming_and_resolution(tmp_path):
    url = "https://host/dir/My%20File.xlsx"
    assert cache_name(url) == f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_My File.xlsx"
    task = load_task(write_task(tmp_path))
    with pytest.raises(
        StateActError, match=r"https://host/dir/My%20File.xlsx is not in the cache dir"
    ):
        resolve_source(url, task, tmp_path)
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "My File.xlsx").write_bytes(b"per-task layout")
    assert resolve_source(url, task, tmp_path).read_bytes() == b"per-task layout"
    (tmp_path / cache_name(url)).write_bytes(b"uuid layout")
    assert resolve_source(url, task, tmp_path).read_bytes() == b"uuid layout"
    (tmp_path / "fixture.txt").write_text("local")
    assert resolve_source("fixture.txt", task, None).read_text() == "local"
    with pytest.raises(StateActError, match="absent.txt"):
        resolve_source("absent.txt", task, None)


def test_placeholders_and_open_commands():
    values = default_placeholders(1920, 1080, "pw")
    command = [
        "xdotool",
        "mousemove",
        "{SCREEN_WIDTH_HALF}",
        "{SCREEN_HEIGHT_HALF}",
        "echo {CLIENT_PASSWORD} | sudo -S x",
        "{UNKNOWN}",
    ]
    assert substitute_placeholders(command, values) == [
        "xdotool",
        "mousemove",
        "960",
        "540",
        "echo pw | sudo -S x",
        "{UNKNOWN}",
    ]
    assert substitute_placeholders({"a": "{SCREEN_WIDTH}x{SCREEN_HEIGHT}", "n": 3}, values) == {
        "a": "1920x1080",
        "n": 3,
    }
    assert open_command("/home/user/a.XLSX") == ["soffice", "--calc", "/home/user/a.XLSX"]
    assert open_command("/home/user/b.csv")[1] == "--calc"
    assert open_command("/home/user/c.odt")[1] == "--writer"
    assert open_command("/home/user/d.pptx")[1] == "--impress"
    assert open_command("/home/user/e.png") == ["xdg-open", "/home/user/e.png"]
    script = window_activate_script("a.xlsx - LibreOffice Calc", strict=True, by_class=False)
    assert "'^a\\.xlsx - LibreOffice Calc$'" in script and "windowactivate" in script


def test_relative_time_phrases():
    wednesday = date(2024, 1, 10)
    assert resolve_phrase("tomorrow", wednesday) == date(2024, 1, 11)
    assert resolve_phrase("next Monday", wednesday) == date(2024, 1, 15)
    assert resolve_phrase("next Wednesday", wednesday) == date(2024, 1, 17)
    assert resolve_phrase("next week Saturday", wednesday) == date(2024, 1, 20)
    assert resolve_phrase("10th next month", wednesday) == date(2024, 2, 10)
    assert resolve_phrase("5th next month", date(2024, 12, 31)) == date(2025, 1, 5)
    assert resolve_phrase("first monday eight months later", wednesday) == date(2024, 9, 2)
    rules = {
        "relativeTime": {"from": "next Monday split", "to": "next Friday split"},
        "expected": {
            "puDay": "{DayD}",
            "puMonth": "{MonthD}",
            "doDay": "{DayD}",
            "doMonth": "{Month0D}",
        },
        "timezone": "Europe/Zurich",
    }
    filled = rule_relative_time(rules, today=wednesday)["expected"]
    assert filled == {"puDay": "15", "puMonth": "1", "doDay": "12", "doMonth": "01"}
    rules = {
        "relativeTime": {"from": "tomorrow"},
        "expected": {"time": ["{DoW}, {Month} {Day0D}, {Year}"], "m": "{month}"},
        "expect_in_result": True,
    }
    out = rule_relative_time(rules, today=wednesday)
    assert (
        out["expected"] == {"time": ["Thu, Jan 11, 2024"], "m": "january"}
        and out["expect_in_result"]
    )
    with pytest.raises(StateActError, match="someday"):
        rule_relative_time({"relativeTime": {"from": "someday"}, "expected": {}}, today=wednesday)
    with pytest.raises(StateActError, match="timezone"):
        rule_relative_time({"relativeTime": {"from": "today"}, "timezone": "Mars/Base"})
