"""Tab-tolerant str_replace: it matches as the reference does but writes only the edited text."""

from __future__ import annotations

import random
import re

import pytest

from sandboxes.toolbox.editor_text import (
    MAX_VIEW_CHARS,
    TRUNCATED_NOTE,
    Expansion,
    numbered_view,
    replace_tabs_as_spaces,
)

PIECES = ["\t", "\t\t", "  ", "    ", "ab", "x", "=", "42", "tab\tsep", " "]


def random_text(rng: random.Random) -> str:
    lines = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))) for _ in range(6)]
    return "\n".join(lines) + "\n"


def random_edit(rng: random.Random, old: str) -> str:
    """What a model might write as new_str for text it copied from a view."""
    at = rng.randint(0, len(old))
    kind = rng.choice(["insert", "delete", "indent", "same", "newline"])
    if kind == "insert":
        return old[:at] + rng.choice(["NEW", " y", "\tz", "        w"]) + old[at:]
    if kind == "delete":
        return old[:at] + old[at + 1 :]
    if kind == "indent":
        return old.replace("\n", "\n        ")
    if kind == "newline":
        return old[:at] + "\n        added\n" + old[at:]
    return old


def squeeze(text: str) -> list[str]:
    """Each line with its runs of spaces and tabs as one space (tabs and spaces made equal)."""
    return [re.sub(r"[ \t]+", " ", line) for line in text.split("\n")]


def test_random_edits_agree_with_the_reference_up_to_tabs():
    rng = random.Random(18)
    checked = 0
    for _ in range(3000):
        text = random_text(rng)
        wide = text.expandtabs()
        begin = rng.randint(0, len(wide) - 1)
        old = wide[begin : begin + rng.randint(1, 20)]
        new = random_edit(rng, old)
        match = replace_tabs_as_spaces(text, old, new)
        assert match.count == wide.count(old)  # the reference's count
        if match.count != 1:
            continue
        checked += 1
        reference = wide.replace(old, new.expandtabs())
        assert squeeze(match.new_text) == squeeze(reference), (text, old, new, match.new_text)
        # Only the matched span changes: the text around it is the file's own, tabs and all.
        starts = Expansion.of(text).starts
        end = wide.find(old) + len(old)
        last = next(i for i, start in enumerate(starts) if start >= end)
        assert match.new_text[: match.start] == text[: match.start]
        assert match.new_text.endswith(text[last:])
        if new == old:
            assert match.new_text == text
    assert checked > 500


def test_unchanged_stretches_keep_their_tabs():
    text = "a\tb\tc\n\tindented\tvalue\n"
    match = replace_tabs_as_spaces(text, "        indented        value", "        indented  VALUE")
    assert match.count == 1
    assert match.new_text == "a\tb\tc\n\tindented  VALUE\n"


def test_match_inside_a_tab():
    # "    x" covers the last four of the tab's eight columns; the tab is left as it was.
    match = replace_tabs_as_spaces("k\n\tx\n", "    x", "    y")
    assert match.count == 1 and match.new_text == "k\n\ty\n"
    # Removing those four columns leaves the first four as spaces.
    match = replace_tabs_as_spaces("k\n\tx\n", "    x", "x")
    assert match.new_text == "k\n    x\n"


def test_new_lines_in_a_tab_indented_block_get_tabs():
    text = "if a:\n\tif b:\n\t\tgo()\n"
    match = replace_tabs_as_spaces(
        text, "                go()", "                go()\n                stop()"
    )
    assert match.new_text == "if a:\n\tif b:\n\t\tgo()\n\t\tstop()\n"


def test_space_indented_files_keep_their_spaces():
    match = replace_tabs_as_spaces("x\n    y\n", "\ty", "\tz")  # a tab where the file has spaces
    assert match.count == 0  # four spaces never read as one tab (8 columns)
    match = replace_tabs_as_spaces("x\n        y\n", "\ty", "\tz")
    assert match.count == 1 and match.new_text == "x\n        z\n"


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        ("", ["     1\t"]),
        ("a\n", ["     1\ta", "     2\t"]),
        ("a\r\nb", ["     1\ta", "     2\tb"]),
    ],
)
def test_view_lines(content, lines):
    assert numbered_view(content, "/f").split("\n")[1:-1] == lines


def test_view_clips_after_16000_characters_of_file_text():
    content = "".join(f"line {n}\n" for n in range(1, 3001))
    view = numbered_view(content, "/f")
    body = view.split("\n", 1)[1]
    text = "\n".join(line.split("\t", 1)[1] for line in body.rstrip("\n").split("\n"))
    assert text == content[:MAX_VIEW_CHARS] + TRUNCATED_NOTE


def test_insert_written_with_spaces_into_tab_indented_code_gets_tabs(tmp_path):
    from sandboxes.toolbox.editor import Editor

    path = tmp_path / "m.py"
    path.write_text("def f():\n\tif x:\n\t\treturn 1\n")
    editor = Editor(cwd=lambda: str(tmp_path))
    output = editor.run("insert", str(path), insert_line=2, insert_text="                log(x)\n")
    assert "     3\t                log(x)\n" in output
    assert path.read_text() == "def f():\n\tif x:\n\t\tlog(x)\n\t\treturn 1\n"
    path.write_text("a:\n    b\n")  # space-indented: left as written
    editor.run("insert", str(path), insert_line=2, insert_text="        c")
    assert path.read_text() == "a:\n    b\n        c\n"


def test_file_mixing_crlf_and_lf_lines(tmp_path):
    from sandboxes.toolbox.editor import Editor

    path = tmp_path / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\nfour\n")
    editor = Editor(cwd=lambda: str(tmp_path))
    view = editor.run("view", str(path))
    assert "\r" not in view and view.endswith("     4\tfour\n     5\t\n")
    editor.run("str_replace", str(path), old_str="one\ntwo", new_str="1\n2")
    editor.run("str_replace", str(path), old_str="three\nfour", new_str="3\n4")
    assert path.read_bytes() == b"1\r\n2\r\n3\n4\n"


def test_a_large_tab_indented_block_keeps_its_tabs():
    lines = [("\t" * (1 + i % 3)) + f"value_{i} = compute({i}, x)" for i in range(2000)]
    text = "head\n" + "\n".join(lines) + "\ntail\n"
    old = "\n".join(lines).expandtabs()
    match = replace_tabs_as_spaces(text, old, "        first\n" + old.replace("compute", "calc"))
    assert match.new_text == text.replace("head\n", "head\n\tfirst\n").replace("compute", "calc")
