"""Where StateAct's editor deliberately differs from Anthropic's reference editor, and why.

Each entry names a recorded scenario of `tests/data/editor_reference.json`, the reason the
reference is at fault there, and, per call index, what StateAct returns instead (the fields not
given are still compared with the reference). docs/editor.md lists the same differences.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Expect:
    """StateAct's own result for one call; None means 'as the reference'."""

    outcome: str | None = None
    text: str | None = None
    text_contains: str | None = None
    files: dict | None = None
    dirs: list | None = None


@dataclass(frozen=True)
class Deviation:
    reason: str
    calls: dict[int, Expect] = field(default_factory=dict)


DEVIATIONS: dict[str, Deviation] = {}

TABS_KEPT = "def f():\n\treturn 1\n\nclass A:\n\tdef g(self):\n\t\treturn 2\n"
REWRITES_TABS = (
    "The reference expands every tab of the file to spaces on any edit (it reads the file with "
    "expandtabs() and writes that back), which breaks Makefiles, TSV data and tab-indented code "
    "far from the edit. StateAct writes only the edited text; the view and the match are the same."
)
CONVERTS_CRLF = (
    "The reference reads with universal newlines and writes LF, so one edit converts a CRLF file "
    "(Windows text, .bat, many CSVs) to LF. StateAct matches the model's LF text against the CRLF "
    "lines and writes CRLF back; the view is the same."
)
KEEPS_FINAL_NEWLINE = (
    "Inserting after the empty last line of a file that ends with a newline (or of an empty file): "
    "the reference joins the new line after it with no newline, so the file loses its final "
    "newline. StateAct keeps it, so its snippet shows one more empty last line."
)

DEVIATIONS.update(
    {
        "view_nul_bytes": Deviation(
            "A file with NUL bytes is binary: the reference prints the raw control bytes as a "
            "line. StateAct refuses with an error that points to python, file/xxd or view_image.",
            {0: Expect(outcome="error", text_contains="binary")},
        ),
        "view_lone_cr": Deviation(
            "The reference reads files with universal newlines, so a lone CR (old Mac line "
            "ends, progress bars in logs) becomes a line break in its view and its edits, and an "
            "old_str with that CR never matches. StateAct reads only LF and CRLF as line ends, so "
            "the view, the line numbers and the edits agree with the bytes on disk.",
            {
                0: Expect(text_contains="`cat -n` on {root}/a.txt:\n     1\ta\rb\n     2\t\n"),
                1: Expect(outcome="ok", text_contains="     1\tc\n", files={"a.txt": "c\n"}),
            },
        ),
        "view_hidden_directory_itself": Deviation(
            "The reference's `find -not -path '*/.*'` drops every path under a hidden folder, so "
            "viewing ~/.config lists nothing at all. StateAct hides only hidden names below the "
            "folder that was asked for.",
            {0: Expect(text_contains="{root}/.config/app/settings.ini\n{root}/.config/top.txt")},
        ),
        "view_directory_with_space": Deviation(
            "The reference passes the folder to `find` unquoted, so a path with a space fails "
            "with find's errors. StateAct lists it.",
            {0: Expect(outcome="ok", text_contains="{root}/my dir/sub/g.txt")},
        ),
        "create_missing_parent": Deviation(
            "The reference cannot create a file whose folder does not exist yet (it fails with an "
            "Errno message). StateAct creates the missing folders, as a model expects from "
            "`create`.",
            {
                0: Expect(
                    outcome="ok",
                    text="File created successfully at: {root}/new/dir/f.txt",
                    files={"new/dir/f.txt": "f\n"},
                    dirs=["new", "new/dir"],
                )
            },
        ),
        "str_replace_tab_as_spaces": Deviation(
            REWRITES_TABS,
            {i: Expect(files={"a.txt": TABS_KEPT.replace("1\n", "10\n")}) for i in (0, 1)},
        ),
        "str_replace_tab_exact": Deviation(
            REWRITES_TABS, {0: Expect(files={"a.txt": TABS_KEPT.replace("2\n", "20\n")})}
        ),
        "str_replace_tab_block_as_spaces": Deviation(
            REWRITES_TABS,
            {
                0: Expect(
                    files={
                        "a.txt": TABS_KEPT.replace(
                            "g(self):\n\t\treturn 2", "g(self, n):\n\t\treturn n"
                        )
                    }
                )
            },
        ),
        "str_replace_tab_reindent": Deviation(
            REWRITES_TABS + " New lines in a tab-indented span get tab indentation, too.",
            {
                0: Expect(
                    files={
                        "a.txt": TABS_KEPT.replace("\t\treturn 2", "\t\tif self:\n\t\t\treturn 2")
                    }
                )
            },
        ),
        "str_replace_tsv_as_spaces": Deviation(
            REWRITES_TABS,
            {i: Expect(files={"a.txt": "name\tqty\napple\t4\npear\t10\n"}) for i in (0, 1)},
        ),
        "str_replace_tab_unique_only_verbatim": Deviation(
            "An old_str holding a real tab was written from the raw file (a view never shows "
            "tabs), so StateAct matches it verbatim first: here it occurs once. The reference "
            "expands it to spaces and then counts the spaced line as a second match.",
            {
                0: Expect(
                    outcome="ok", text_contains="     1\tc\n", files={"a.txt": "c\na       b\n"}
                )
            },
        ),
        "str_replace_crlf": Deviation(
            CONVERTS_CRLF, {i: Expect(files={"a.txt": "one\r\n2\r\n3\r\n"}) for i in (0, 1)}
        ),
        "insert_crlf": Deviation(
            CONVERTS_CRLF, {0: Expect(files={"a.txt": "one\r\nmid\r\ntwo\r\n"})}
        ),
        "insert_tabs": Deviation(
            REWRITES_TABS,
            {0: Expect(files={"a.txt": TABS_KEPT.replace("return 1\n", "return 1\n\t# note\n")})},
        ),
        "insert_after_final_empty_line": Deviation(
            KEEPS_FINAL_NEWLINE,
            {
                0: Expect(
                    text_contains="     3\t\n     4\tx\n     5\t\nReview",
                    files={"a.txt": "1\n2\n\nx\n"},
                )
            },
        ),
        "insert_empty_file_after": Deviation(
            KEEPS_FINAL_NEWLINE,
            {
                0: Expect(
                    text_contains="     1\t\n     2\tx\n     3\t\nReview", files={"a.txt": "\nx\n"}
                )
            },
        ),
        "insert_text_with_newline": Deviation(
            "The reference splits the inserted text on every newline, so text ending with one "
            "(the usual way to write a line) adds a stray blank line. StateAct reads a final "
            "newline as the end of the last inserted line.",
            {
                0: Expect(
                    text_contains="     1\t1\n     2\tx\n     3\t2\n     4\t\nReview",
                    files={"a.txt": "1\nx\n2\n"},
                )
            },
        ),
        "undo_after_create": Deviation(
            "The reference records the created text as the file's previous state, so undoing a "
            "`create` writes the same text back and leaves the file. StateAct removes the file it "
            "created.",
            {
                1: Expect(
                    text="Last edit to {root}/a.txt undone successfully: "
                    "the file it created was removed.",
                    files={},
                )
            },
        ),
        "undo_tab_file": Deviation(
            REWRITES_TABS + " (The reference's undo also restores the spaced copy, not the file.)",
            {
                0: Expect(files={"a.txt": TABS_KEPT.replace("return 1\n", "return 11\n")}),
                1: Expect(files={"a.txt": TABS_KEPT}),
            },
        ),
    }
)
