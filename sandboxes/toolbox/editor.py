"""A file editor with the semantics of Anthropic's `str_replace_based_edit_tool`.

Commands: view, create, str_replace, insert, undo_edit. Paths must be absolute; every edit keeps the
previous content in memory so `undo_edit` can restore it. Views and matching follow Anthropic's
reference editor (see `editor_text` and docs/editor.md); files are written back with their own
line ends and tabs, and only the edited text changes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import PurePosixPath

from .editor_text import (
    TAB_INDENTED,
    TabMatch,
    indent_with_tabs,
    numbered_view,
    occurrence_lines,
    replace_tabs_as_spaces,
)
from .errors import BadRequest, ToolError
from .files import special_file_message

SNIPPET_CONTEXT = 4
MAX_DIR_ENTRIES = 1000
MAX_EDIT_BYTES = 20_000_000
COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."
REVIEW_INSERT = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate "
    "lines, etc). Edit the file again if necessary."
)


def split_lines(text: str) -> list[str]:
    """Lines of inserted text: a final newline ends the last line, it adds no empty line."""
    lines = text.split("\n")
    return lines[:-1] if len(lines) > 1 and text.endswith("\n") else lines


class LineEnds:
    """A file's text with CRLF line ends read as LF, and written back the way the file had them."""

    def __init__(self, text: str):
        self.crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
        self.text = text.replace("\r\n", "\n") if self.crlf else text

    def restore(self, text: str) -> str:
        return text.replace("\n", "\r\n") if self.crlf else text

    def model(self, text: str) -> str:
        """Text the model sent, in the form `self.text` uses."""
        return text.replace("\r\n", "\n") if self.crlf else text


class Editor:
    """The editor, with per-file undo history for the life of the toolbox."""

    def __init__(self, cwd: Callable[[], str]):
        self._cwd = cwd
        self._history: dict[str, list[str | None]] = {}

    def run(self, command: str, path: str, **params) -> str:
        if command not in COMMANDS:
            raise BadRequest(
                f"param `command` must be one of {', '.join(COMMANDS)}, not {command!r}."
            )
        if not os.path.isabs(path):
            suggestion = os.path.join(self._cwd(), path)
            raise ToolError(
                f"The path {path} is not an absolute path; it should start with `/`. "
                f"Maybe you meant {suggestion}?"
            )
        # Like the reference: tidy the spelling (`//`, `/./`, a trailing /), leave `..` to the OS.
        path = str(PurePosixPath(path))
        return getattr(self, f"_{command}")(path, **params)

    # -- commands ------------------------------------------------------------------------------
    def _view(self, path: str, view_range: list[int] | None = None, **_) -> str:
        if os.path.isdir(path):
            if view_range:
                raise ToolError(
                    "The `view_range` parameter is not allowed when `path` points to a directory."
                )
            return self._view_directory(path)
        text = self._read(path).replace("\r\n", "\n")
        if not view_range:
            return numbered_view(text, path)
        lines = text.split("\n")
        start, end = self._check_range(view_range, len(lines))
        return numbered_view("\n".join(lines[start - 1 : end]), path, start)

    def _create(self, path: str, file_text: str | None = None, **_) -> str:
        if file_text is None:
            raise BadRequest("param `file_text` is required for command create.")
        if os.path.exists(path):
            raise ToolError(
                f"File already exists at: {path}. Cannot overwrite files using command `create`; "
                "use str_replace to edit it, or remove it first."
            )
        parent = os.path.dirname(path)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"Cannot create the directory {parent}: {exc.strerror}.") from exc
        self._write(path, file_text, previous=None)
        return f"File created successfully at: {path}"

    def _str_replace(
        self, path: str, old_str: str | None = None, new_str: str | None = None, **_
    ) -> str:
        if old_str is None:
            raise BadRequest("param `old_str` is required for command str_replace.")
        if old_str == "":
            raise ToolError(
                "old_str is empty; give the exact text to replace (use insert to add new lines)."
            )
        original = self._read(path)
        ends = LineEnds(original)
        text, old, new = ends.text, ends.model(old_str), ends.model(new_str or "")
        if "\r\n" in text and "\n" in old and "\r\n" not in old and old not in text:
            # A file mixing CRLF and LF lines: the view showed its CRLF lines as plain lines.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
        # old_str with a tab was written from the raw file: it matches verbatim when it can. Without
        # one it may come from a view, which shows tabs as spaces: match it the way the view reads.
        verbatim = count > 0 if "\t" in old else "\t" not in text
        if verbatim and count == 1:
            start = text.index(old)
            new_text = text.replace(old, new)
        elif verbatim and count > 1:
            raise self._not_unique(old_str, occurrence_lines(text, old))
        else:
            match: TabMatch = replace_tabs_as_spaces(text, old, new)
            if match.count == 0:
                raise ToolError(
                    f"No replacement was performed, old_str `{old_str}` did not appear verbatim "
                    f"in {path}."
                )
            if match.count > 1:
                raise self._not_unique(old_str, match.lines)
            start, new_text = match.start, match.new_text
        self._write(path, ends.restore(new_text), previous=original)
        first = text.count("\n", 0, start)
        lines = new_text.split("\n")
        low = max(0, first - SNIPPET_CONTEXT)
        high = first + SNIPPET_CONTEXT + new.count("\n")
        snippet = numbered_view("\n".join(lines[low : high + 1]), f"a snippet of {path}", low + 1)
        return f"The file {path} has been edited. {snippet}{REVIEW}"

    @staticmethod
    def _not_unique(old_str: str, lines: list[int]) -> ToolError:
        return ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines "
            f"{lines}. Please ensure it is unique."
        )

    def _insert(
        self,
        path: str,
        insert_line: int | None = None,
        insert_text: str | None = None,
        new_str: str | None = None,
        **_,
    ) -> str:
        if insert_line is None:
            raise BadRequest("param `insert_line` is required for command insert.")
        text_to_insert = insert_text if insert_text is not None else new_str
        if text_to_insert is None:
            raise BadRequest("param `insert_text` (or `new_str`) is required for command insert.")
        original = self._read(path)
        ends = LineEnds(original)
        lines = ends.text.split("\n")
        if not 0 <= insert_line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the range "
                f"of lines of the file: [0, {len(lines)}] (0 inserts at the top)."
            )
        inserted = split_lines(ends.model(text_to_insert).replace("\r\n", "\n"))
        nearby = "\n".join(lines[max(0, insert_line - 50) : insert_line + 50])
        if TAB_INDENTED.search(nearby):
            # The view showed the file's tab indentation as spaces; write the new lines' with tabs.
            inserted = indent_with_tabs("\n".join(inserted), keep_first=False).split("\n")
        new_lines = lines[:insert_line] + inserted + lines[insert_line:]
        if insert_line == len(lines) and lines[-1] == "":
            # After the empty last line of a file that ends with a newline: keep that newline.
            new_lines.append("")
        self._write(path, ends.restore("\n".join(new_lines)), previous=original)
        low = max(0, insert_line - SNIPPET_CONTEXT)
        high = insert_line + len(inserted) + SNIPPET_CONTEXT
        snippet = numbered_view(
            "\n".join(new_lines[low:high]), "a snippet of the edited file", low + 1
        )
        return f"The file {path} has been edited. {snippet}{REVIEW_INSERT}"

    def _undo_edit(self, path: str, **_) -> str:
        history = self._history.get(path)
        if not history:
            raise ToolError(f"No edit history found for {path}; there is nothing to undo.")
        previous = history.pop()
        if previous is None:
            try:
                os.unlink(path)
            except OSError as exc:
                raise ToolError(f"Cannot undo the creation of {path}: {exc.strerror}.") from exc
            return f"Last edit to {path} undone successfully: the file it created was removed."
        self._write(path, previous, previous=None, record=False)
        view = numbered_view(previous.replace("\r\n", "\n"), path)
        return f"Last edit to {path} undone successfully. {view}"

    # -- helpers -------------------------------------------------------------------------------
    def _read(self, path: str) -> str:
        if not os.path.exists(path):
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if os.path.isdir(path):
            raise ToolError(f"The path {path} is a directory; this command needs a file.")
        try:
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):  # opening a FIFO would wait for a writer forever
                raise ToolError(special_file_message(path, mode))
            if os.path.getsize(path) > MAX_EDIT_BYTES:
                raise ToolError(
                    f"{path} is larger than 20 MB; use bash (grep, sed, head) or python instead."
                )
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ToolError(f"Cannot read {path}: {exc.strerror}.") from exc
        if b"\0" in data[:8192]:
            raise ToolError(self._binary_message(path))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(self._binary_message(path)) from exc

    @staticmethod
    def _binary_message(path: str) -> str:
        return (
            f"{path} is a binary or non-UTF-8 file, which this editor cannot show; use python "
            "(openpyxl, python-docx, ...), `file`/`xxd` in bash, or view_image for pictures."
        )

    def _write(self, path: str, text: str, previous: str | None, record: bool = True) -> None:
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as exc:
            raise ToolError(f"Cannot write {path}: {exc.strerror}.") from exc
        if record:
            self._history.setdefault(path, []).append(previous)

    @staticmethod
    def _check_range(view_range, line_count: int) -> tuple[int, int]:
        """[start, end] of a file view; the count includes the empty line after a final newline."""
        if (
            not isinstance(view_range, list)
            or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise BadRequest(
                "Invalid `view_range`. It should be a list of two integers [start, end]."
            )
        start, end = view_range
        if not 1 <= start <= line_count:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its first element `{start}` should be "
                f"within the range of lines of the file: [1, {line_count}]"
            )
        if end > line_count:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its second element `{end}` should be "
                f"smaller than the number of lines in the file: `{line_count}`"
            )
        if end != -1 and end < start:
            raise ToolError(
                f"Invalid `view_range`: {view_range}. Its second element `{end}` should be larger "
                f"or equal than its first `{start}` (or -1 for the end of the file)"
            )
        return start, line_count if end == -1 else end

    @staticmethod
    def _view_directory(path: str) -> str:
        entries: list[str] = []
        for root, dirs, files in os.walk(path, onerror=lambda _: None):
            depth = 0 if root == path else os.path.relpath(root, path).count(os.sep) + 1
            visible = sorted(d for d in dirs if not d.startswith("."))
            entries.extend(os.path.join(root, name) + "/" for name in visible)
            dirs[:] = visible if depth == 0 else []
            entries.extend(os.path.join(root, f) for f in sorted(files) if not f.startswith("."))
        entries.sort()
        note = ""
        if len(entries) > MAX_DIR_ENTRIES:
            more = len(entries) - MAX_DIR_ENTRIES
            note = f"\n[{more} more entries not shown; use `find` or `ls` in bash]"
            entries = entries[:MAX_DIR_ENTRIES]
        header = (
            f"Here's the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:\n"
        )
        return header + "\n".join([path + "/", *entries]) + note + "\n"
