"""A file editor with the semantics of Anthropic's `str_replace_based_edit_tool`.

Commands: view, create, str_replace, insert, undo_edit. Paths must be absolute; every edit keeps the
previous content in memory so `undo_edit` can restore it. Files are read and written as UTF-8 with
their line endings and tabs untouched.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .errors import BadRequest, ToolError

MAX_VIEW_CHARS = 16000
SNIPPET_CONTEXT = 4
MAX_DIR_ENTRIES = 1000
MAX_EDIT_BYTES = 20_000_000
COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")


def numbered(lines: list[str], first_number: int) -> str:
    """Lines in `cat -n` style: the number right-aligned in 6 columns, then a tab."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start=first_number))


def split_lines(text: str) -> list[str]:
    """The file's lines without their terminators; a final newline does not start an extra line."""
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


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
                f"The path {path} is not an absolute path; it should start with `/`. Maybe you meant {suggestion}?"
            )
        path = os.path.normpath(path)
        return getattr(self, f"_{command}")(path, **params)

    # -- commands ------------------------------------------------------------------------------
    def _view(self, path: str, view_range: list[int] | None = None, **_) -> str:
        if os.path.isdir(path):
            if view_range is not None:
                raise ToolError("view_range is not allowed when path is a directory.")
            return self._view_directory(path)
        text = self._read(path)
        lines = split_lines(text)
        start, end = 1, len(lines)
        if view_range is not None:
            start, end = self._check_range(view_range, len(lines))
        shown = numbered(lines[start - 1 : end], start)
        header = f"Here's the result of running `cat -n` on {path}:\n"
        if len(shown) > MAX_VIEW_CHARS:
            shown = shown[:MAX_VIEW_CHARS].rsplit("\n", 1)[0]
            last = start + shown.count("\n")
            shown += (
                f"\n[output clipped after line {last} of {len(lines)}; view the rest with view_range "
                f"[{last + 1}, ...] or search it with `grep -n PATTERN {path}`]"
            )
        return header + shown + "\n"

    def _create(self, path: str, file_text: str | None = None, **_) -> str:
        if file_text is None:
            raise BadRequest("param `file_text` is required for command create.")
        if os.path.exists(path):
            raise ToolError(
                f"File already exists at {path}; `create` never overwrites. Use str_replace to edit it, "
                "or remove it first."
            )
        parent = os.path.dirname(path)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"Cannot create the directory {parent}: {exc.strerror}.") from exc
        self._write(path, file_text, previous=None)
        return f"File created successfully at {path}."

    def _str_replace(
        self, path: str, old_str: str | None = None, new_str: str | None = None, **_
    ) -> str:
        if old_str is None:
            raise BadRequest("param `old_str` is required for command str_replace.")
        if old_str == "":
            raise ToolError(
                "old_str is empty; give the exact text to replace (use insert to add new lines)."
            )
        new_str = new_str or ""
        shown_old = old_str
        text = self._read(path)
        if "\r\n" in text and "\r\n" not in old_str:
            # The file uses CRLF line ends; match the model's \n-only text against them.
            old_str, new_str = old_str.replace("\n", "\r\n"), new_str.replace("\n", "\r\n")
        count = text.count(old_str)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{shown_old}` did not appear verbatim in {path}."
            )
        if count > 1:
            lines = self._occurrence_lines(text, old_str)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{shown_old}` in lines "
                f"{lines}. Please ensure it is unique."
            )
        start_line = text[: text.index(old_str)].count("\n") + 1
        new_text = text.replace(old_str, new_str)
        self._write(path, new_text, previous=text)
        edited_lines = new_str.count("\n") + 1
        return self._edited(path, new_text, start_line, start_line + edited_lines - 1)

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
        text = self._read(path)
        lines = split_lines(text)
        if not 0 <= insert_line <= len(lines):
            raise ToolError(
                f"Invalid insert_line {insert_line}: it must be between 0 and {len(lines)}, the number of "
                f"lines in {path} (0 inserts at the top)."
            )
        newline = "\r\n" if "\r\n" in text else "\n"
        inserted = split_lines(text_to_insert.replace("\r\n", "\n")) or [""]
        if newline == "\r\n":
            lines = [line.removesuffix("\r") for line in lines]
        new_lines = lines[:insert_line] + inserted + lines[insert_line:]
        ends_open = bool(text) and not text.endswith("\n") and insert_line < len(lines)
        new_text = newline.join(new_lines) + ("" if ends_open else newline)
        self._write(path, new_text, previous=text)
        return self._edited(path, new_text, insert_line + 1, insert_line + len(inserted))

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
        lines = split_lines(previous)
        return f"Last edit to {path} undone successfully. " + self._snippet_text(
            path, lines, 1, len(lines)
        )

    # -- helpers -------------------------------------------------------------------------------
    def _read(self, path: str) -> str:
        if not os.path.exists(path):
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if os.path.isdir(path):
            raise ToolError(f"The path {path} is a directory; this command needs a file.")
        try:
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
        if (
            not isinstance(view_range, list)
            or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise BadRequest("param `view_range` must be a list of two integers [start, end].")
        start, end = view_range
        if not 1 <= start <= max(line_count, 1):
            raise ToolError(
                f"Invalid view_range {view_range}: start must be between 1 and {line_count}."
            )
        if end == -1:
            return start, line_count
        if end < start:
            raise ToolError(
                f"Invalid view_range {view_range}: end must be >= start, or -1 for the end of the file."
            )
        if end > line_count:
            raise ToolError(
                f"Invalid view_range {view_range}: end must be at most {line_count}, the number of lines."
            )
        return start, end

    @staticmethod
    def _occurrence_lines(text: str, needle: str) -> list[int]:
        lines, position = [], text.find(needle)
        while position != -1:
            lines.append(text.count("\n", 0, position) + 1)
            position = text.find(needle, position + 1)
        return lines

    def _edited(self, path: str, new_text: str, first: int, last: int) -> str:
        lines = split_lines(new_text)
        start = max(1, first - SNIPPET_CONTEXT)
        end = min(len(lines), last + SNIPPET_CONTEXT)
        return (
            f"The file {path} has been edited. "
            + self._snippet_text(path, lines, start, end)
            + "Review the changes and make sure they are as expected. Edit the file again if necessary."
        )

    @staticmethod
    def _snippet_text(path: str, lines: list[str], start: int, end: int) -> str:
        snippet = numbered([line.removesuffix("\r") for line in lines[start - 1 : end]], start)
        if len(snippet) > MAX_VIEW_CHARS:
            snippet = snippet[:MAX_VIEW_CHARS] + "\n[snippet clipped]"
        return f"Here's the result of running `cat -n` on a snippet of {path}:\n{snippet}\n"

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
            note = f"\n[{len(entries) - MAX_DIR_ENTRIES} more entries not shown; use `find` or `ls` in bash]"
            entries = entries[:MAX_DIR_ENTRIES]
        header = f"Here are the files and directories up to 2 levels deep in {path}, excluding hidden items:\n"
        return header + "\n".join([path + "/", *entries]) + note + "\n"
