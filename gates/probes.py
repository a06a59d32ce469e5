"""Typed verifier probes the gate may run (StructAgent's VerifySpec kinds, adapted).

Each spec is validated before it runs (a bad field is a tool error naming it) and answers True,
False or None (inconclusive) with its evidence. A determinate answer overrides the gate model's
judgement. Probes only read: files are copied out of the gate's snapshot and opened on the host,
SQLite databases read-only, and shell probes are argv lists limited to read-only programs.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.kernel.core import ToolError
from sandboxes.agent_files import FileLimitError, bounded_call, check_zip, clip, open_sqlite
from sandboxes.base import SandboxError
from sandboxes.toolbox.protocol import FileStatRequest, PythonRun
from sandboxes.typed import run

from .probe_grammar import check_argv


class ProbeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileExists(ProbeSpec):
    kind: Literal["file_exists"]
    path: str


class FileGrep(ProbeSpec):
    kind: Literal["file_grep"]
    path: str
    patterns: list[str] = Field(min_length=1)
    mode: Literal["all", "any"] = "all"

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression ({exc})") from None
        return patterns


class XlsxCells(ProbeSpec):
    kind: Literal["xlsx_cells"]
    path: str
    sheet: str | None = None
    cells: list[str] = Field(default_factory=list)
    expect: dict[str, dict[str, Any]] = Field(default_factory=dict)
    sheet_names: list[str] | None = None


class DocText(ProbeSpec):
    kind: Literal["docx_text", "pptx_text"]
    path: str
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)


class SqliteQuery(ProbeSpec):
    kind: Literal["sqlite_query"]
    path: str
    query: str
    expect_rows: list[list[Any]] | None = None

    @field_validator("query")
    @classmethod
    def _select_only(cls, query: str) -> str:
        if not re.match(
            r"\s*(select|with|pragma\s+table_info)\b", query, re.I
        ) or ";" in query.strip().rstrip(";"):
            raise ValueError("must be a single SELECT (or WITH ... SELECT) statement")
        return query


class ShellCommand(ProbeSpec):
    kind: Literal["shell_command"]
    argv: list[str] = Field(min_length=1)
    expect_exit: int | None = 0
    expect_substring: str | None = None
    forbid_substring: str | None = None

    @field_validator("argv")
    @classmethod
    def _read_only(cls, argv: list[str]) -> list[str]:
        refusal = check_argv(argv)
        if refusal:
            raise ValueError(refusal)
        return argv


class DomQuery(ProbeSpec):
    kind: Literal["dom_query"]
    url: str
    selector: str
    expect_text: str | None = None
    expect_count: int | None = None


class UrlMatch(ProbeSpec):
    kind: Literal["url_match"]
    pattern: str
    profile_root: str = "/home/user/.config"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a valid regular expression ({exc})") from None
        return pattern


PROBE_KINDS = {
    "file_exists": FileExists,
    "file_grep": FileGrep,
    "xlsx_cells": XlsxCells,
    "docx_text": DocText,
    "pptx_text": DocText,
    "sqlite_query": SqliteQuery,
    "shell_command": ShellCommand,
    "dom_query": DomQuery,
    "url_match": UrlMatch,
}


PROBE_COPY_BYTES = 100 * 1024 * 1024
"""Largest file a probe copies out of the sandbox to read."""
PROBE_EVIDENCE_CHARS = 4000
"""Characters of a probe's evidence (the file's own text, often) the gate model and records get."""


def register_probe(kind: str, spec_class: type[ProbeSpec], runner) -> None:
    """Add a probe kind from another module (`screen_probes.py`): its spec and its runner."""
    PROBE_KINDS[kind] = spec_class
    _RUNNERS[spec_class] = runner


@dataclass
class ProbeOutcome:
    verdict: bool | None
    evidence: str


def validate_probe(spec: dict) -> ProbeSpec:
    """The typed spec, or a ToolError naming the offending field."""
    if not isinstance(spec, dict):
        raise ToolError("a probe spec must be a JSON object with a `kind`.")
    kind = spec.get("kind")
    if kind not in PROBE_KINDS:
        raise ToolError(
            f"field `kind`: unknown probe kind {kind!r}; use one of {', '.join(PROBE_KINDS)}."
        )
    try:
        return PROBE_KINDS[kind].model_validate(spec)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise ToolError(f"field `{field}` of the {kind} probe: {first['msg']}.") from None


def run_probe(spec: ProbeSpec, sandbox) -> ProbeOutcome:
    """Run a validated probe against the gate's sandbox; any failure is a ToolError naming it."""
    try:
        with tempfile.TemporaryDirectory(prefix="stateact-probe-") as scratch:
            outcome = _RUNNERS[type(spec)](spec, sandbox, Path(scratch))
            return ProbeOutcome(outcome.verdict, clip(outcome.evidence, PROBE_EVIDENCE_CHARS))
    except ToolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken file or sandbox is the model's news, not a crash
        summary = str(exc).splitlines()[0][:300] if str(exc) else ""
        raise ToolError(
            f"the {spec.kind} probe could not run: {type(exc).__name__}: {summary}".rstrip(": ")
        ) from None


def _fetch(sandbox, path: str, scratch: Path) -> Path | None:
    local = scratch / (Path(path).name or "file")
    try:
        sandbox.copy_out(path, local, max_bytes=PROBE_COPY_BYTES)
    except FileNotFoundError:
        return None
    except SandboxError as exc:  # too large, or a FIFO, socket or device: one sentence
        raise ToolError(str(exc)) from None
    if not local.is_file():
        raise ToolError(f"{path} is not a regular file (a directory or a special file).")
    try:
        check_zip(local, path)
    except FileLimitError as exc:
        raise ToolError(str(exc)) from None
    return local


def _file_exists(spec: FileExists, sandbox, scratch: Path) -> ProbeOutcome:
    exists = run(sandbox, FileStatRequest(spec.path)).exists
    return ProbeOutcome(exists, f"{spec.path} {'exists' if exists else 'does not exist'}")


def _file_grep(spec: FileGrep, sandbox, scratch: Path) -> ProbeOutcome:
    local = _fetch(sandbox, spec.path, scratch)
    if local is None:
        return ProbeOutcome(False, f"{spec.path} does not exist")
    text = local.read_bytes().decode("utf-8", errors="replace")
    found = {pattern: bool(re.search(pattern, text, re.M)) for pattern in spec.patterns}
    verdict = all(found.values()) if spec.mode == "all" else any(found.values())
    return ProbeOutcome(
        verdict, ", ".join(f"{p!r}: {'found' if hit else 'absent'}" for p, hit in found.items())
    )


def _xlsx_cells(spec: XlsxCells, sandbox, scratch: Path) -> ProbeOutcome:

    local = _fetch(sandbox, spec.path, scratch)
    if local is None:
        return ProbeOutcome(False, f"{spec.path} does not exist")
    cells = sorted({*spec.cells, *spec.expect})
    sheetnames, readings = _bounded(_read_cells, local, spec.sheet, cells)
    if spec.sheet_names is not None and sheetnames != spec.sheet_names:
        return ProbeOutcome(False, f"sheets are {sheetnames}, expected {spec.sheet_names}")
    sheet = spec.sheet or sheetnames[0]
    if readings is None:
        return ProbeOutcome(False, f"no sheet {sheet!r}; sheets are {sheetnames}")
    verdict, lines = True, []
    for coordinate in cells:
        written, cached = readings[coordinate]
        is_formula = isinstance(written, str) and written.startswith("=")
        reading = {
            "formula": written if is_formula else None,
            "value": cached if is_formula else written,
        }
        lines.append(
            f"{sheet}!{coordinate}: formula={reading['formula']!r} value={reading['value']!r}"
        )
        for key, wanted in spec.expect.get(coordinate, {}).items():
            if key not in reading:
                raise ToolError(f"field `expect.{coordinate}.{key}`: use `value` or `formula`.")
            if not _same(reading[key], wanted):
                verdict = False
                lines[-1] += f"  (expected {key}={wanted!r})"
    return ProbeOutcome(verdict if spec.expect or spec.sheet_names else None, "\n".join(lines))


def _read_cells(local: Path, sheet: str | None, cells: list[str]):
    """The sheet names, and each cell's (value as written, value as last computed) on `sheet`
    (None when there is no such sheet); run in a bounded child."""
    import openpyxl

    formulas = openpyxl.load_workbook(local)  # formulas as written
    values = openpyxl.load_workbook(local, data_only=True)  # values as last computed and saved
    sheet = sheet or formulas.sheetnames[0]
    if sheet not in formulas.sheetnames:
        return formulas.sheetnames, None
    readings = {c: (formulas[sheet][c].value, values[sheet][c].value) for c in cells}
    return formulas.sheetnames, readings


def _bounded(fn, *args):
    """`fn(*args)` where a hostile file cannot take the harness's memory or time."""
    try:
        return bounded_call(fn, *args)
    except FileLimitError as exc:
        raise ToolError(str(exc)) from None


def _same(actual, wanted) -> bool:
    if isinstance(actual, int | float) and isinstance(wanted, int | float):
        return abs(actual - wanted) <= 1e-9 * max(1.0, abs(wanted))
    if isinstance(actual, str) and isinstance(wanted, str):
        return (
            actual.replace(" ", "").upper() == wanted.replace(" ", "").upper()
            if actual.startswith("=")
            else actual == wanted
        )
    return actual == wanted


def _doc_text(spec: DocText, sandbox, scratch: Path) -> ProbeOutcome:
    local = _fetch(sandbox, spec.path, scratch)
    if local is None:
        return ProbeOutcome(False, f"{spec.path} does not exist")
    text = _bounded(_document_text, local, spec.kind)
    missing = [s for s in spec.contains if s not in text]
    present = [s for s in spec.not_contains if s in text]
    verdict = None if not (spec.contains or spec.not_contains) else not missing and not present
    evidence = (
        f"{len(text)} characters of text"
        + (f"; missing {missing}" if missing else "")
        + (f"; unwanted {present}" if present else "")
    )
    return ProbeOutcome(verdict, evidence if verdict is not None else text[:3000])


def _document_text(local: Path, kind: str) -> str:
    """The text of a docx (paragraphs, then table cells) or a pptx (text frames)."""
    if kind == "docx_text":
        import docx

        document = docx.Document(str(local))
        text = "\n".join(p.text for p in document.paragraphs)
        return (
            text
            + "\n"
            + "\n".join(c.text for t in document.tables for row in t.rows for c in row.cells)
        )
    import pptx

    deck = pptx.Presentation(str(local))
    return "\n".join(
        s.text_frame.text for slide in deck.slides for s in slide.shapes if s.has_text_frame
    )


def _sqlite_query(spec: SqliteQuery, sandbox, scratch: Path) -> ProbeOutcome:
    local = _fetch(sandbox, spec.path, scratch)
    if local is None:
        return ProbeOutcome(False, f"{spec.path} does not exist")
    try:
        with open_sqlite(local) as db:
            rows = [list(row) for row in db.execute(spec.query).fetchmany(200)]
    except FileLimitError as exc:
        raise ToolError(str(exc)) from None
    except sqlite3.Error as exc:
        raise ToolError(f"field `query`: {exc}.") from None
    verdict = None if spec.expect_rows is None else rows == spec.expect_rows
    return ProbeOutcome(verdict, f"rows: {rows[:50]}")


def _shell_command(spec: ShellCommand, sandbox, scratch: Path) -> ProbeOutcome:
    # As the observer user (docker): another uid than the agent's, with a home of its own.
    code, output = sandbox.exec(spec.argv, timeout=20, user="observer")
    checks = []
    if spec.expect_exit is not None:
        checks.append(code == spec.expect_exit)
    if spec.expect_substring is not None:
        checks.append(spec.expect_substring in output)
    if spec.forbid_substring is not None:
        checks.append(spec.forbid_substring not in output)
    return ProbeOutcome(all(checks) if checks else None, f"exit {code}; output: {output[:2000]}")


def _dom_query(spec: DomQuery, sandbox, scratch: Path) -> ProbeOutcome:
    script = DOM_QUERY_SCRIPT.format(url=spec.url, selector=spec.selector)
    result = run(sandbox, PythonRun(script, timeout=60, session="probe", observer=True))
    if result.error:
        return ProbeOutcome(None, f"could not load the page: {result.error[-500:]}")
    count_line, _, text = result.output.partition("\n")
    count = int(count_line.strip() or 0)
    checks = []
    if spec.expect_count is not None:
        checks.append(count == spec.expect_count)
    if spec.expect_text is not None:
        checks.append(spec.expect_text in text)
    return ProbeOutcome(all(checks) if checks else None, f"{count} match(es); text: {text[:1500]}")


def _url_match(spec: UrlMatch, sandbox, scratch: Path) -> ProbeOutcome:
    """The newest visited URL in the Chromium/Chrome profiles' History databases (persisted state,
    not a live browser) matched against the pattern."""
    code, found = sandbox.exec(
        ["find", spec.profile_root, "-name", "History", "-type", "f"], timeout=20, user="observer"
    )
    histories = [line for line in found.splitlines() if line.strip()] if code == 0 else []
    newest: tuple[int, str] | None = None
    for number, path in enumerate(histories):
        local = scratch / f"history-{number}"
        try:
            sandbox.copy_out(path, local, max_bytes=PROBE_COPY_BYTES)
            with open_sqlite(local) as db:
                row = db.execute(
                    "SELECT last_visit_time, url FROM urls ORDER BY last_visit_time DESC LIMIT 1"
                ).fetchone()
        except (SandboxError, sqlite3.Error):  # too large, endless, or not a database
            continue
        if row and not isinstance(row[0], int | float):
            continue
        if row and (newest is None or row[0] > newest[0]):
            newest = (row[0], row[1])
    if newest is None:
        return ProbeOutcome(None, f"no browser history under {spec.profile_root}")
    matched = re.search(spec.pattern, newest[1]) is not None
    return ProbeOutcome(matched, f"newest visited URL: {clip(str(newest[1]), 500)}")


DOM_QUERY_SCRIPT = """
from playwright.sync_api import sync_playwright as _sp
with _sp() as _p:
    _b = _p.chromium.launch(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
    )
    _page = _b.new_page()
    _page.goto({url!r}, timeout=20000)
    _els = _page.query_selector_all({selector!r})
    print(len(_els))
    print("\\n".join(e.inner_text() for e in _els[:20]))
    _b.close()
"""

_RUNNERS = {
    FileExists: _file_exists,
    FileGrep: _file_grep,
    XlsxCells: _xlsx_cells,
    DocText: _doc_text,
    SqliteQuery: _sqlite_query,
    ShellCommand: _shell_command,
    DomQuery: _dom_query,
    UrlMatch: _url_match,
}
