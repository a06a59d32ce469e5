"""Deterministic structural checks on the deliverables an instruction names, run before any model
call.

A definite failure (a named new file missing, a document its application reports as holding
unsaved changes, a file that does not parse in its format, an extension that lies about the
content) rejects without a model call. A marker that a document is open (a lock file) is only a
finding for the model.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sandboxes.agent_files import (
    FileLimitError,
    bounded_call,
    check_zip,
    clip,
    open_sqlite,
    read_member,
)
from sandboxes.base import SANDBOX_HOME, SandboxError
from sandboxes.toolbox.protocol import FileStatRequest
from sandboxes.typed import run

from .appstate import AppState, open_markers
from .quoting import quoted

PATH_PATTERN = re.compile(r"(?:~|/home/user)(?:/[^\s\"'`,;:()<>\[\]{}|]+)+")
QUOTED_PATH = re.compile(r"[\"'`]((?:~|/home/user)/[^\"'`\n]+)[\"'`]")
"""A path in quotes, as `batch` writes one with spaces in its name (`"/home/user/sales 1.xlsx"`)."""
OOXML_MAIN_PART = {
    ".xlsx": "xl/workbook.xml",
    ".docx": "word/document.xml",
    ".pptx": "ppt/presentation.xml",
}
ODF_MIMETYPES = {
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".odp": "application/vnd.oasis.opendocument.presentation",
}
MAGIC = {
    ".pdf": b"%PDF",
    ".png": b"\x89PNG",
    ".jpg": b"\xff\xd8\xff",
    ".jpeg": b"\xff\xd8\xff",
    ".gif": b"GIF8",
}
SQLITE_EXTENSIONS = {".db", ".sqlite", ".sqlite3"}
TEXT_EXTENSIONS = {".txt", ".md", ".html", ".htm"}
CHECKED_EXTENSIONS = {
    *OOXML_MAIN_PART,
    *ODF_MIMETYPES,
    *MAGIC,
    *SQLITE_EXTENSIONS,
    *TEXT_EXTENSIONS,
    ".csv",
    ".json",
}
MAX_CHECK_BYTES = 100 * 1024 * 1024
CHANGE_VERBS = re.compile(
    r"\b(edit|update|modify|change|add|insert|fill|put|write|sort|format|rename|replace|remove|delete|"
    r"highlight|set|save|apply|fix|correct|append|merge)\b",
    re.I,
)


@dataclass
class Finding:
    """One structural observation; `definite` failures reject without asking a model."""

    path: str
    check: str
    ok: bool
    detail: str
    definite: bool = False

    def __post_init__(self) -> None:
        # Paths and details carry the agent's text (names, a mimetype): a few KiB at most reach
        # the gate's records and its model.
        self.path, self.detail = clip(self.path, 1024), clip(self.detail)


@dataclass
class StructuralReport:
    findings: list[Finding] = field(default_factory=list)

    @property
    def definite_gaps(self) -> list[str]:
        return [f"{quoted(f.path)}: {f.detail}" for f in self.findings if not f.ok and f.definite]

    def render(self) -> str:
        if not self.findings:
            return "(no deliverable paths named in the instruction; nothing checked structurally)"
        # Paths and details carry names the agent chose: each is one quoted JSON string.
        return "\n".join(
            f"- [{'ok' if f.ok else 'FAIL'}] {f.check} {quoted(f.path)}: {quoted(f.detail)}"
            for f in self.findings
        )


def named_paths(instruction: str) -> list[str]:
    """Absolute sandbox paths the instruction names (with `~` expanded), in order, without
    repeats."""
    paths = []
    quoted = [m.group(1) for m in QUOTED_PATH.finditer(instruction)]
    rest = QUOTED_PATH.sub(" ", instruction)  # a quoted path may hold spaces; take it whole
    # A path cut off by `<` or `{` is a pattern (`letter_<id>.docx`, `{name}.csv`), not a file.
    patterns = {m.group(0) for m in PATH_PATTERN.finditer(rest) if _before_pattern(rest, m.end())}
    for match in quoted + [m for m in PATH_PATTERN.findall(rest) if m not in patterns]:
        path = match.rstrip(".")
        if path.startswith("~"):
            path = SANDBOX_HOME + path[1:]
        if path not in paths:
            paths.append(path)
    return paths


def _before_pattern(text: str, end: int) -> bool:
    return end < len(text) and text[end] in "<{"


def check_deliverables(
    sandbox,
    instruction: str,
    initially_present: dict[str, bool],
    changed: list[dict],
    apps: AppState | None = None,
) -> StructuralReport:
    """Check every named path in `sandbox` (the gate's snapshot) and every changed document;
    `apps` is what the live sandbox's applications said about their open documents."""
    report = StructuralReport()
    apps = apps or AppState(reason="not asked")
    changed_paths = {entry["path"] for entry in changed}
    with tempfile.TemporaryDirectory(prefix="stateact-gate-") as scratch:
        for path in named_paths(instruction):
            stat = run(sandbox, FileStatRequest(path))
            if not stat.exists:
                if not initially_present.get(path, False):
                    similar = _similar_changed(path, changed_paths)
                    hint = (
                        "; files changed during the run with that name or type: "
                        f"{', '.join(similar)}"
                        if similar
                        else ""
                    )
                    report.findings.append(
                        Finding(
                            path,
                            "exists",
                            False,
                            f"the instruction names this path but nothing is there{hint}",
                            definite=True,
                        )
                    )
                continue
            if stat.is_dir:
                report.findings.append(Finding(path, "exists", True, "a directory"))
                continue
            _check_file(sandbox, path, stat, report, Path(scratch), changed_paths, apps)
        _check_in_place_edit(instruction, initially_present, changed_paths, report)
        for document in apps.documents:
            if document.modified and not document.path:
                detail = "LibreOffice holds a document that was never saved, with changes"
                report.findings.append(Finding("(untitled)", "unsaved", False, detail))
        for path in sorted(changed_paths - set(named_paths(instruction))):
            if PurePosixPath(path).suffix.lower() in OOXML_MAIN_PART | ODF_MIMETYPES:
                stat = run(sandbox, FileStatRequest(path))
                if stat.exists and not stat.is_dir:
                    _check_file(sandbox, path, stat, report, Path(scratch), changed_paths, apps)
    return report


def _check_in_place_edit(
    instruction: str,
    initially_present: dict[str, bool],
    changed: set[str],
    report: StructuralReport,
) -> None:
    """When the instruction asks for a change to the one file it names and no visible file at all
    was written during the run, the work was never saved. (If anything else was written, the
    deliverable may legitimately be another file, such as an export; the model check judges
    that.)"""
    named = named_paths(instruction)
    if (
        len(named) != 1
        or not initially_present.get(named[0])
        or not CHANGE_VERBS.search(instruction)
    ):
        return
    if any(_visible_work(path) for path in changed):
        return
    path = named[0]
    if not any(f.path == path and f.check == "exists" and f.ok for f in report.findings):
        return  # gone or a directory: other findings speak for it
    if any(f.path == path and f.check == "unsaved" and not f.ok for f in report.findings):
        return  # its application already said so
    report.findings.append(
        Finding(
            path,
            "saved",
            False,
            "the instruction asks for a change to this file, but no file was written during "
            "the run: save it",
            definite=True,
        )
    )


def _visible_work(path: str) -> bool:
    """A file a person would call work: not hidden, not in an application's scratch space (/tmp
    fills with an office's temporary files the moment it starts)."""
    return "/." not in path and not path.startswith("/tmp/")


def _check_file(
    sandbox,
    path: str,
    stat: dict,
    report: StructuralReport,
    scratch: Path,
    changed: set[str],
    apps: AppState,
) -> None:
    _check_open(sandbox, path, report, apps)
    pure = PurePosixPath(path)
    modified = "changed during the run" if path in changed else "not changed during the run"
    report.findings.append(Finding(path, "exists", True, f"{stat.size} bytes, {modified}"))
    suffix = pure.suffix.lower()
    if suffix not in CHECKED_EXTENSIONS or stat.size > MAX_CHECK_BYTES:
        return
    local = scratch / f"{len(report.findings)}{suffix}"
    try:
        sandbox.copy_out(path, local, max_bytes=MAX_CHECK_BYTES)
        problem = bounded_call(format_problem, local, suffix)
    except FileNotFoundError:
        problem = "a link that leads to no file user `user` can read"
    except FileLimitError as exc:  # too big or too slow to parse here: the model layer decides
        report.findings.append(Finding(path, "format", False, f"not checked: {exc}"))
        return
    except SandboxError as exc:  # a FIFO, socket or device where a file is expected
        problem = str(exc)
    if problem:
        report.findings.append(Finding(path, "format", False, problem, definite=True))
    else:
        report.findings.append(Finding(path, "format", True, f"parses as {suffix[1:]}"))


def _check_open(sandbox, path: str, report: StructuralReport, apps: AppState) -> None:
    """Unsaved changes the application reports are definite; an open-document marker is not."""
    document = apps.open_document(path)
    if document is not None:
        if document.modified:
            detail = (
                "open in LibreOffice with unsaved changes: the file on disk does not hold the "
                "edits; save it (ctrl+s, keeping the format) before finishing"
            )
            report.findings.append(Finding(path, "unsaved", False, detail, definite=True))
        else:
            detail = "open in LibreOffice, which reports no unsaved changes"
            report.findings.append(Finding(path, "unsaved", True, detail))
        return
    for marker, app in open_markers(path):
        if not run(sandbox, FileStatRequest(marker)).exists:
            continue
        if apps.asked and app == "LibreOffice":
            detail = (
                f"{marker} is beside it, but the running LibreOffice does not hold this document "
                "open (a stale lock file)"
            )
        else:
            asked = f"asking LibreOffice: {apps.reason}" if apps.reason else "not asked"
            detail = (
                f"{marker} is beside it: the document may be open in {app}; whether it has "
                f"unsaved changes is not known ({asked}); compare the file's content with the "
                "instruction"
            )
        report.findings.append(Finding(path, "open", False, detail, definite=False))


def format_problem(local: Path, suffix: str) -> str | None:
    """Why the file does not parse as its extension says, or None when it does."""
    with open(local, "rb") as handle:
        head = handle.read(8)
    try:
        if suffix in OOXML_MAIN_PART or suffix in ODF_MIMETYPES:
            if not zipfile.is_zipfile(local):
                kind = "plain text" if _looks_textual(local) else "not a zip container"
                return f"the extension says {suffix[1:]} but the content is {kind}"
            check_zip(local, f"the {suffix[1:]} package")
            with zipfile.ZipFile(local) as archive:
                names = set(archive.namelist())
                if suffix in OOXML_MAIN_PART and OOXML_MAIN_PART[suffix] not in names:
                    return (
                        f"the extension says {suffix[1:]} but the package has no "
                        f"{OOXML_MAIN_PART[suffix]}"
                    )
                if suffix in ODF_MIMETYPES:
                    mimetype = (
                        read_member(archive, "mimetype", 256).decode(errors="replace")
                        if "mimetype" in names
                        else ""
                    )
                    if mimetype != ODF_MIMETYPES[suffix]:
                        return (
                            f"the extension says {suffix[1:]} but the mimetype is "
                            f"{mimetype or 'missing'}"
                        )
            return _load_office(local, suffix)
        if suffix in MAGIC:
            return (
                None
                if head.startswith(MAGIC[suffix])
                else f"the extension says {suffix[1:]} but the bytes do not"
            )
        if suffix in SQLITE_EXTENSIONS:
            return _sqlite_problem(local)
        if suffix in TEXT_EXTENSIONS:
            return _text_problem(local, suffix)
        if suffix == ".json":
            json.loads(local.read_text(encoding="utf-8"))
        elif suffix == ".csv":
            if zipfile.is_zipfile(local):
                return "the extension says csv but the content is a zip package (an office file?)"
            with open(local, newline="", encoding="utf-8-sig") as handle:
                list(csv.reader(handle))
    except FileLimitError as exc:
        return str(exc)
    except (ValueError, UnicodeDecodeError, csv.Error, KeyError, zipfile.BadZipFile) as exc:
        return f"does not parse as {suffix[1:]}: {clip(str(exc), 200)}"
    return None


def _load_office(local: Path, suffix: str) -> str | None:
    try:
        if suffix == ".xlsx":
            import openpyxl

            openpyxl.load_workbook(local, read_only=True).close()
        elif suffix == ".docx":
            import docx

            docx.Document(str(local))
        elif suffix == ".pptx":
            import pptx

            pptx.Presentation(str(local))
    except Exception as exc:  # any library error means the file is broken for its readers
        return f"does not open as {suffix[1:]}: {type(exc).__name__}: {str(exc)[:200]}"
    return None


def _sqlite_problem(local: Path) -> str | None:
    if local.stat().st_size == 0:
        return None  # sqlite3 creates an empty file for an empty database
    with open(local, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            return "the extension says an SQLite database but the file has no SQLite header"
    try:
        with open_sqlite(local) as db:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        return f"does not open as an SQLite database: {exc}"
    return None


def _text_problem(local: Path, suffix: str) -> str | None:
    """Text deliverables: binary content (NUL bytes, a zip or PDF) behind a text extension."""
    with open(local, "rb") as handle:
        head = handle.read(8192)
    if head.startswith((b"PK\x03\x04", b"%PDF", b"\x89PNG")) or b"\x00" in head:
        return f"the extension says {suffix[1:]} but the content is binary"
    return None


def _looks_textual(local: Path) -> bool:
    try:
        with open(local, "rb") as handle:
            handle.read(4096).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _similar_changed(path: str, changed: set[str]) -> list[str]:
    pure = PurePosixPath(path)
    return sorted(
        c
        for c in changed
        if PurePosixPath(c).name == pure.name or PurePosixPath(c).suffix == pure.suffix
    )[:5]
