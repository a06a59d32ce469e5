"""The general OSWorld metrics on small generated files."""

from __future__ import annotations

import json
import sqlite3

import pytest

from harness.kernel.core import StateActError
from tasks.metrics import METRICS
from tasks.metrics.general import (
    check_csv,
    check_direct_json_object,
    check_include_exclude,
    check_json,
    check_json_keybindings,
    check_json_settings,
    check_list,
    compare_text_file,
    compare_with_method,
    diff_text_file,
    exact_match,
    file_contains,
    fuzzy_match,
    is_in_list,
    is_utc_0,
    literal_match,
    match_in_list,
    run_sqlite3,
)


def write(tmp_path, name, text) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_registry_has_the_general_and_table_metrics():
    for name in (
        "exact_match",
        "check_include_exclude",
        "compare_table",
        "compare_csv",
        "infeasible",
        "check_list",
    ):
        assert name in METRICS


def test_string_metrics():
    assert exact_match("1\n", {"expected": "1\n"}) == 1.0
    assert exact_match("1", {"expected": "1\n"}) == 0.0
    with pytest.raises(StateActError, match="'expected'"):
        exact_match("1", {})
    rules = {"include": ["no libreoffice is running", "killed"], "exclude": ["still running"]}
    assert check_include_exclude("no libreoffice is running\nkilled from terminal", rules) == 1.0
    assert check_include_exclude("libreoffice is still running\nkilled", rules) == 0.0
    assert check_include_exclude(None, rules) == 0.0
    assert match_in_list("light", {"expected": ["light", "system"]}) == 1.0
    assert match_in_list("dark", {"expected": ["light", "system"]}) == 0.0
    assert is_in_list(["/a", "/b"], {"expected": "/b"}) == 1.0
    assert is_in_list(None, {"expected": "/b"}) == 0.0
    assert fuzzy_match("hello world", {"expected": "hello world"}) == 1.0
    assert 0.5 < fuzzy_match("hello wrld", {"expected": "hello world"}) < 1.0
    assert literal_match("A", "a", ignore_case=True) == 1.0
    assert literal_match("A", "a") == 0.0
    assert literal_match(["x", 1], ["x", "1"], type="list") == 1.0
    # OSWorld reads the fourth line of `timedatectl status`, the time zone.
    head = "Local time: x\nUniversal time: y\nRTC time: z\n"
    assert is_utc_0(head + "      Time zone: Etc/UTC (UTC, +0000)\n") == 1.0
    assert is_utc_0(head + "      Time zone: Asia/Tokyo (JST, +0900)\n") == 0.0


def test_file_metrics(tmp_path):
    log = write(tmp_path, "diff.out", "")
    assert check_list(log, {"unexpect": [".+"]}) == 1.0
    out = write(tmp_path, "apt.out", "ii  openjdk-17-jre  17.0\nii other\n")
    assert check_list(out, {"expect": [r"openjdk-\d+-(jre|jdk)"]}) == 1.0
    assert check_list(out, {"expect": ["missing"]}) == 0.0
    assert check_list(out, {"unexpect": ["other"]}) == 0.0
    assert check_list(None, {"expect": []}) == 0.0
    a = write(tmp_path, "a.txt", "line one\nline two\n")
    b = write(tmp_path, "b.txt", "line one\nline 2\nline three\n")
    assert diff_text_file(a, a) == 1.0
    assert diff_text_file(a, b) == pytest.approx(2 * 1 / 5)  # lines compared, not characters
    assert diff_text_file(a, None) == 0.0
    assert compare_text_file(a, write(tmp_path, "c.txt", "line  one\n line two")) == 0.0
    assert (
        compare_text_file(a, write(tmp_path, "d.txt", "line  one\n line two"), ignore_blanks=True)
        == 1.0
    )
    assert file_contains(a, {"expected": ["one", "two"]}) == 1.0
    assert file_contains(a, {"expected": ["three"]}) == 0.0


def test_csv_and_json_metrics(tmp_path):
    accounts = write(tmp_path, "acc.csv", "url,user\nimap://a,x@y\nimap://b,z@y\n")
    assert check_csv(accounts, {"expect": [{"url": "imap://a", "user": "x@y"}]}) == 1.0
    assert check_csv(accounts, {"unexpect": [{"url": "imap://b"}]}) == 0.0
    data = {"name": "happy", "background": {"scripts": ["bg.js"]}, "mode": "smart tree"}
    manifest = write(tmp_path, "m.json", json.dumps(data))
    rules = {
        "expect": [
            {"key": ["name"], "method": "eq", "ref": "happy"},
            {"key": ["background", "scripts"], "method": "eq", "ref": ["bg.js"]},
        ]
    }
    assert check_json(manifest, rules) == 1.0
    assert (
        check_json(manifest, {"expect": [{"key": ["mode"], "method": "re", "ref": r"\bsmart\b"}]})
        == 1.0
    )
    assert check_json(manifest, {"expect": [{"key": ["nope"], "method": "eq", "ref": 1}]}) == 0.0
    assert (
        check_json(manifest, {"unexpect": [{"key": ["name"], "method": "eq", "ref": "happy"}]})
        == 0.0
    )
    config = write(tmp_path, "c.yml", "name: Test Account\nauthor:\n  email: t@x.com\n")
    assert (
        check_json(
            config,
            {"expect": [{"key": ["author", "email"], "method": "eq", "ref": "t@x.com"}]},
            is_yaml=True,
        )
        == 1.0
    )
    settings = write(tmp_path, "settings.json", '{"editor.wordWrapColumn": 50, "x": 1}')
    assert check_json_settings(settings, {"expected": {"editor.wordWrapColumn": 50}}) == 1.0
    assert check_json_settings(settings, {"expected": {"editor.wordWrapColumn": 40}}) == 0.0
    bindings = write(tmp_path, "kb.json", '// comment\n[{"key": "ctrl+j", "command": "c"}]')
    assert check_json_keybindings(bindings, {"expected": {"key": "ctrl+j", "command": "c"}}) == 1.0
    assert check_json_keybindings(bindings, {"expected": {"key": "ctrl+k", "command": "c"}}) == 0.0


def test_check_direct_json_object():
    assert check_direct_json_object('{"a": "1", "b": "Kili"}\n', {"expected": {"a": "1"}}) == 1.0
    # Without expect_in_result OSWorld compares a listed value as a whole list.
    assert (
        check_direct_json_object(
            '{"a": "1", "b": "Kili"}\n', {"expected": {"a": "1", "b": ["Kili", "kili"]}}
        )
        == 0.0
    )
    assert check_direct_json_object({"a": "2"}, {"expected": {"a": "1"}}) == 0.0
    assert check_direct_json_object({}, {"expected": {"a": "1"}}) == 0.0
    assert check_direct_json_object("not json", {"expected": {"a": "1"}}) == 0.0
    rules = {"expected": {"to": ["STO", "ARN"], "time": ["2024-01-15"]}, "expect_in_result": True}
    assert check_direct_json_object({"to": "ARN", "time": "2024-01-15"}, rules) == 1.0
    # A listed value must equal the result's string exactly (OSWorld).
    assert check_direct_json_object({"to": "ARN", "time": "Mon 2024-01-15"}, rules) == 0.0
    assert check_direct_json_object({"to": "OSL", "time": "2024-01-15"}, rules) == 0.0


def test_run_sqlite3(tmp_path):
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
        conn.execute("INSERT INTO t VALUES (3)")
    conn.close()
    assert run_sqlite3(str(path), {"sql": "SELECT COUNT(*) = 1 FROM t"}) == 1.0
    assert run_sqlite3(str(path), {"sql": "SELECT COUNT(*) = 2 FROM t"}) == 0.0
    assert run_sqlite3(None, {"sql": "SELECT 1"}) == 0.0


def test_compare_with_method_edge_cases():
    assert compare_with_method(None, "approx:0.1", 1.0) is False
    assert compare_with_method("abc", "lt", 3) is False  # incomparable types fail, not crash
    assert compare_with_method("a\nb", "re.S", "a.b") is True
    assert compare_with_method("a\nb", "re", "a.b") is False
    with pytest.raises(StateActError, match="range.zz"):
        compare_with_method(1, "range.zz", [0, 2])
