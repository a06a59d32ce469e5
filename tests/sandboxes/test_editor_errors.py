"""Bad input to the editor gives one clear error that says what to do, through the real toolbox."""

from __future__ import annotations

import pytest

from tests.sandboxes.test_toolbox import ToolboxProcess


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    (home / "a.txt").write_text("alpha\nbeta\nalpha\n")
    return home


@pytest.fixture(scope="module")
def toolbox(home):
    client = ToolboxProcess(home)
    yield client
    assert client.close() == 0


CASES = [
    # (params, words the message must hold; {home} is the temporary home)
    (
        {"command": "view", "path": "a.txt"},
        ["not an absolute path", "Maybe you meant {home}/a.txt"],
    ),
    ({"command": "view", "path": "{home}/nope.txt"}, ["{home}/nope.txt does not exist"]),
    (
        {"command": "str_replace", "path": "{home}/nope.txt", "old_str": "a", "new_str": "b"},
        ["does not exist"],
    ),
    (
        {"command": "str_replace", "path": "{home}/a.txt", "old_str": "gamma", "new_str": "x"},
        ["No replacement was performed", "`gamma` did not appear verbatim"],
    ),
    (
        {"command": "str_replace", "path": "{home}/a.txt", "old_str": "alpha", "new_str": "x"},
        ["Multiple occurrences", "lines [1, 3]", "unique"],
    ),
    (
        {"command": "str_replace", "path": "{home}/a.txt", "old_str": "", "new_str": "x"},
        ["old_str is empty"],
    ),
    ({"command": "view", "path": "{home}/a.txt", "view_range": [0, 2]}, ["[1, 4]"]),
    ({"command": "view", "path": "{home}/a.txt", "view_range": [1, 5]}, ["`4`"]),
    ({"command": "view", "path": "{home}/a.txt", "view_range": [3, 2]}, ["larger or equal"]),
    ({"command": "view", "path": "{home}/a.txt", "view_range": [1]}, ["two integers"]),
    ({"command": "view", "path": "{home}", "view_range": [1, 2]}, ["not allowed", "directory"]),
    (
        {"command": "insert", "path": "{home}/a.txt", "insert_line": 9, "insert_text": "x"},
        ["`insert_line`", "9", "[0, 4]"],
    ),
    (
        {"command": "insert", "path": "{home}/a.txt", "insert_line": -1, "insert_text": "x"},
        ["[0, 4]"],
    ),
    ({"command": "insert", "path": "{home}/a.txt", "insert_text": "x"}, ["insert_line"]),
    ({"command": "create", "path": "{home}/a.txt", "file_text": "x"}, ["already exists"]),
    ({"command": "create", "path": "{home}/b.txt"}, ["file_text"]),
    ({"command": "undo_edit", "path": "{home}/a.txt"}, ["No edit history"]),
    ({"command": "str_replace", "path": "{home}", "old_str": "a"}, ["directory"]),
    ({"command": "explode", "path": "{home}/a.txt"}, ["view, create, str_replace"]),
]


@pytest.mark.parametrize(("params", "words"), CASES)
def test_bad_input_is_one_clear_error(toolbox, home, params, words):
    params = {
        key: value.replace("{home}", str(home)) if isinstance(value, str) else value
        for key, value in params.items()
    }
    before = (home / "a.txt").read_bytes()
    error = toolbox.error("editor.run", **params)
    message = error["message"]
    assert error["type"] in ("ToolError", "BadRequest")
    assert "\n" not in message and len(message) < 400 and "Traceback" not in message, message
    for word in words:
        assert word.replace("{home}", str(home)) in message, message
    assert (home / "a.txt").read_bytes() == before  # a refused call changes nothing
