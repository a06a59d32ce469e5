"""Writer metrics: OSWorld's checks over .docx/.odt files, and the shared plumbing of the document metrics.

Every metric here (and in `slides.py`, `pdfs.py`) takes the getter outputs first — file paths as `str`, or
None when the getter found no file — then the task's `options` as keyword arguments, and returns a float in
[0, 1]. Unreadable input never raises: a missing path, or a file that is not a valid document of the expected
kind, scores 0.0 and the reason is logged on the `tasks.metrics` logger (a wrong or corrupt output file is a
failed task, not an evaluator error). Programming errors and malformed task options still raise.
"""

from __future__ import annotations

import colorsys
import functools
import inspect
import logging
import re
import zipfile
from collections.abc import Callable, Iterable

import docx
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.opc.exceptions import PackageNotFoundError
from docx.shared import Pt
from lxml import etree
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.registry import metric

logger = logging.getLogger("tasks.metrics")

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = {"w": W_NS, "m": "http://schemas.openxmlformats.org/officeDocument/2006/math"}


class UnreadableFile(Exception):
    """A metric input that is missing or cannot be parsed; the metric scores 0.0."""


# Errors the parsing libraries raise on files that are not what their name says.
PARSE_ERRORS = (
    OSError,
    ValueError,
    KeyError,
    zipfile.BadZipFile,
    etree.LxmlError,
    PackageNotFoundError,
)


def file_metric(
    name: str, files: int = 1
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register `fn` as metric `name`; its first `files` arguments are paths (or lists of paths).

    A None path or an `UnreadableFile` raised inside scores 0.0 with a logged reason; an option the
    function does not take raises StateActError.
    """

    def register(fn: Callable[..., float]) -> Callable[..., float]:
        parameters = inspect.signature(fn).parameters.values()
        open_ended = any(p.kind is p.VAR_KEYWORD for p in parameters)
        accepted = {
            p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }

        @functools.wraps(fn)
        def scored(*args, **options) -> float:
            # Task files annotate options with "_note"-style keys; those are comments.
            options = {key: value for key, value in options.items() if not key.startswith("_")}
            unknown = sorted(set(options) - accepted)
            if unknown and not open_ended:
                raise StateActError(f"metric {name} has no option {unknown[0]!r}")
            for path in args[:files]:
                paths = path if isinstance(path, list) else [path]
                if not paths or any(p is None for p in paths):
                    logger.info("%s scores 0: an input file is missing", name)
                    return 0.0
            try:
                return float(fn(*args, **options))
            except UnreadableFile as exc:
                logger.info("%s scores 0: %s", name, exc)
                return 0.0

        return metric(name)(scored)

    return register


def load(path: str, opener: Callable, kind: str):
    """Open `path` with `opener`, turning any parse failure into `UnreadableFile`."""
    try:
        return opener(path)
    except PARSE_ERRORS as exc:
        raise UnreadableFile(
            f"{path} is not a readable {kind} file ({type(exc).__name__}: {exc})"
        ) from None


def load_xml(path: str) -> etree._ElementTree:
    """An XML file such as LibreOffice's registrymodifications.xcu."""
    return load(path, etree.parse, "XML")


def color_matches(rgb: tuple[int, int, int] | str | None, name: str) -> bool:
    """Whether an RGB colour (tuple or 'RRGGBB') reads as the plain colour `name` (red, blue, ...)."""
    if rgb is None:
        return False
    if isinstance(rgb, str):
        rgb = tuple(int(rgb[i : i + 2], 16) for i in (0, 2, 4))
    hue, sat, val = colorsys.rgb_to_hsv(*(c / 255 for c in rgb))
    hue *= 360
    name = name.lower()
    if name in ("black", "white", "gray", "grey"):
        return {"black": val < 0.2, "white": sat < 0.1 and val > 0.9}.get(
            name, sat < 0.1 and 0.2 <= val <= 0.9
        )
    # LibreOffice's palette names ("Dark Red 2", "Light Blue 1") still count as the colour.
    hues = {
        "red": (340, 20),
        "orange": (20, 45),
        "yellow": (45, 70),
        "green": (70, 170),
        "blue": (190, 260),
    }
    if name not in hues or sat < 0.4 or val < 0.3:
        return False
    low, high = hues[name]
    return low <= hue < high if low < high else hue >= low or hue < high


def ratio(a: str, b: str) -> float:
    """rapidfuzz's similarity of two strings as a fraction (two empty strings are identical)."""
    return 1.0 if a == b else fuzz.ratio(a, b) / 100


# --- reading Writer files ---------------------------------------------------------------------------------


def open_docx(path: str):
    return load(path, docx.Document, ".docx")


def odt_paragraphs(path: str) -> list[str]:
    from odf import opendocument, teletype
    from odf.namespaces import TEXTNS

    document = load(path, opendocument.load, ".odt")
    found: list[str] = []

    def walk(node) -> None:
        for child in node.childNodes:
            if child.qname in ((TEXTNS, "p"), (TEXTNS, "h")):
                found.append(teletype.extractText(child))
            elif child.nodeType == child.ELEMENT_NODE:
                walk(child)

    walk(document.text)
    return found


def paragraph_texts(path: str) -> list[str]:
    """Body paragraph texts of a .docx or .odt file, in order."""
    if str(path).lower().endswith(".odt"):
        return odt_paragraphs(path)
    return [p.text for p in open_docx(path).paragraphs]


def body_text(texts: Iterable[str]) -> str:
    """Paragraphs joined, with every run of whitespace (line breaks included) collapsed to one space."""
    return re.sub(r"\s+", " ", "\n".join(texts)).strip()


def texts_equal(path1: str, path2: str) -> bool:
    """Same paragraphs, ignoring differences in whitespace (the shared sanity check of formatting metrics)."""
    return body_text(paragraph_texts(path1)) == body_text(paragraph_texts(path2))


# --- text comparison ---------------------------------------------------------------------------------------


@file_metric("compare_docx_files", files=2)
def compare_docx_files(
    file1: str,
    file2: str,
    ignore_blanks: bool = True,
    ignore_case: bool = False,
    ignore_order: bool = False,
    content_only: bool = False,
    fuzzy_match: bool = False,
    delete_empty_lines: bool = False,
) -> float:
    """Paragraph text of two Writer files. Exact comparisons give 0/1; `content_only` gives the similarity of
    the whole texts and `fuzzy_match` the mean similarity of paired paragraphs (unpaired ones count 0)."""
    if file1.lower().rsplit(".", 1)[-1] != file2.lower().rsplit(".", 1)[-1]:
        logger.info("compare_docx_files scores 0: %s and %s are different formats", file1, file2)
        return 0.0
    paragraphs = [paragraph_texts(file1), paragraph_texts(file2)]
    for i, texts in enumerate(paragraphs):
        if ignore_case:
            texts = [t.lower() for t in texts]
        if delete_empty_lines:
            texts = [t for t in texts if t.strip()]
        if ignore_order:
            texts = sorted(texts, key=lambda t: re.sub(r"\s+", " ", t).strip())
        paragraphs[i] = texts
    first, second = paragraphs
    if content_only:
        return ratio(body_text(first), body_text(second))
    if fuzzy_match:
        if not first and not second:
            return 1.0
        pairs = zip(first, second, strict=False)
        return sum(ratio(body_text([a]), body_text([b])) for a, b in pairs) / max(
            len(first), len(second)
        )
    if ignore_blanks:
        return float(body_text(first) == body_text(second))
    return float(first == second)


@file_metric("compare_docx_files_and_ignore_new_lines", files=2)
def compare_docx_files_and_ignore_new_lines(
    file1: str, file2: str, ignore_blanks: bool = True
) -> float:
    """Text equality where the split into paragraphs and lines does not matter."""
    texts = []
    for path in (file1, file2):
        lines = [t.strip() for p in paragraph_texts(path) for t in p.splitlines() if t.strip()]
        texts.append(body_text(lines) if ignore_blanks else " ".join(lines))
    return float(texts[0] == texts[1])


def reference_entries(path: str) -> list[str]:
    """The non-empty paragraphs after the last heading that names the references or bibliography."""
    texts = [t.strip() for t in paragraph_texts(path)]
    starts = [
        i
        for i, t in enumerate(texts)
        if re.fullmatch(r"(references?|bibliography|works cited)\W*", t, re.I)
    ]
    return [t for t in texts[starts[-1] + 1 :] if t] if starts else []


@file_metric("compare_references", files=2)
def compare_references(
    file1: str, file2: str, content_only: bool = False, reference_base_result: float = 0.5
) -> float:
    """Similarity of the reference lists, rescaled so the untouched draft's similarity
    (`reference_base_result`) scores 0 and a perfect list scores 1."""
    result, gold = reference_entries(file1), reference_entries(file2)
    if not gold:
        raise UnreadableFile(f"{file2} has no references section")
    if content_only:
        similarity = ratio(body_text(result), body_text(gold))
    else:
        similarity = sum(ratio(a, b) for a, b in zip(result, gold, strict=False)) / max(
            len(result), len(gold)
        )
    return max(0.0, (similarity - reference_base_result) / (1 - reference_base_result))


# --- fonts, runs and paragraphs ----------------------------------------------------------------------------


def effective_font_name(run, paragraph, document) -> str | None:
    """The font a run is shown in: its own, its styles', or the document default (None if themed)."""
    if run.font.name:
        return run.font.name
    style = (
        run.style if run.style is not None and run.style.name != "Default Paragraph Font" else None
    )
    for start in (style, paragraph.style):
        while start is not None:
            if start.font.name:
                return start.font.name
            start = start.base_style
    fonts = document.styles.element.find("w:docDefaults/w:rPrDefault/w:rPr/w:rFonts", NS)
    return fonts.get(f"{{{W_NS}}}ascii") if fonts is not None else None


def text_runs(document) -> Iterable[tuple[object, object]]:
    """(paragraph, run) for every run with visible text in the body and its tables."""
    paragraphs = list(document.paragraphs)
    for table in document.tables:
        paragraphs += [p for row in table.rows for cell in row.cells for p in cell.paragraphs]
    for paragraph in paragraphs:
        for run in paragraph.runs:
            if run.text.strip():
                yield paragraph, run


@file_metric("compare_font_names")
def compare_font_names(file: str, rules: dict) -> float:
    """There is text, and every run of it is shown in `rules['font_name']`."""
    document = open_docx(file)
    fonts = [effective_font_name(run, p, document) for p, run in text_runs(document)]
    return float(bool(fonts) and all(font == rules["font_name"] for font in fonts))


@file_metric("compare_line_spacing", files=2)
def compare_line_spacing(file1: str, file2: str) -> float:
    """Same paragraph texts, and each paragraph has the gold's line spacing."""
    result, gold = open_docx(file1).paragraphs, open_docx(file2).paragraphs
    if len(result) != len(gold):
        return 0.0
    for mine, theirs in zip(result, gold, strict=False):
        if mine.text.strip() != theirs.text.strip():
            return 0.0
        if mine.paragraph_format.line_spacing != theirs.paragraph_format.line_spacing:
            return 0.0
    return 1.0


def script_segments(path: str, kind: str) -> list[tuple[int, str]]:
    """(paragraph index, text) of each stretch of adjacent `kind` ('subscript'/'superscript') runs."""
    found = []
    for index, paragraph in enumerate(open_docx(path).paragraphs):
        current = ""
        for run in paragraph.runs + [None]:
            if run is not None and getattr(run.font, kind):
                current += run.text
            elif current:
                found.append((index, current))
                current = ""
    return found


@file_metric("compare_subscript_contains", files=2)
def compare_subscript_contains(file1: str, file2: str) -> float:
    """Every subscript and superscript of the gold is also one, at the same paragraph, in the result."""
    for kind in ("subscript", "superscript"):
        result = script_segments(file1, kind)
        if any(segment not in result for segment in script_segments(file2, kind)):
            return 0.0
    return 1.0


@file_metric("check_italic_font_size_14", files=2)
def check_italic_font_size_14(file1: str, file2: str) -> float:
    """The text is unchanged and every italic run is set in 14 pt (and there is italic text)."""
    if not texts_equal(file1, file2):
        return 0.0
    italic = [run for _, run in text_runs(open_docx(file1)) if run.italic]
    return float(bool(italic) and all(run.font.size == Pt(14) for run in italic))


@file_metric("evaluate_strike_through_last_paragraph", files=2)
def evaluate_strike_through_last_paragraph(file1: str, file2: str) -> float:
    """The text is unchanged and every run of the last non-empty paragraph is struck through."""
    if not texts_equal(file1, file2):
        return 0.0
    paragraphs = [p for p in open_docx(file1).paragraphs if p.text.strip()]
    runs = [run for run in paragraphs[-1].runs if run.text.strip()] if paragraphs else []
    return float(bool(runs) and all(run.font.strike or run.font.double_strike for run in runs))


@file_metric("compare_highlighted_text", files=2)
def compare_highlighted_text(file1: str, file2: str) -> float:
    """The highlighted stretches of text are the same in both documents."""

    def highlighted(path: str) -> list[str]:
        runs = [run for _, run in text_runs(open_docx(path)) if run.font.highlight_color]
        return body_text(run.text for run in runs).split()

    return float(highlighted(file1) == highlighted(file2))


@file_metric("is_first_line_centered")
def is_first_line_centered(file: str) -> float:
    """The first non-empty paragraph is centred."""
    paragraphs = [p for p in open_docx(file).paragraphs if p.text.strip()]
    return float(bool(paragraphs) and paragraphs[0].alignment == WD_ALIGN_PARAGRAPH.CENTER)


# Registered here so importing this module is enough to get every Writer metric.
from tasks.metrics import document_layout  # noqa: E402,F401
