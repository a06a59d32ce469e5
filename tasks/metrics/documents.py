"""Writer metrics: OSWorld's text checks over .docx/.odt files, and the shared plumbing of the
document metrics. Each follows OSWorld's own function (desktop_env/evaluators/metrics/docs.py) so
verdicts agree; its oddities are listed in docs/osworld-fidelity.md.

Every metric here (and in `slides.py`, `pdfs.py`) takes the getter outputs first — file paths as
`str`, or None when the getter found no file — then the task's `options` as keyword arguments,
and returns a float in [0, 1]. Unreadable input never raises: a missing path, or a file that is
not a valid document of the expected kind, scores 0.0 and the reason is logged on the
`tasks.metrics` logger (a wrong or corrupt output file is a failed task, not an evaluator error).
Programming errors and malformed task options still raise.
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
from docx.opc.exceptions import PackageNotFoundError
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
    """Whether an RGB colour (tuple or 'RRGGBB') reads as the plain colour `name` (red, blue,
    ...)."""
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


# --- reading Writer files
# ---------------------------------------------------------------------------------


def open_docx(path: str):
    return load(path, docx.Document, ".docx")


def odt_paragraphs(path: str) -> list[str]:
    """OSWorld's reading of an .odt: every text:p (headings are not), its own text nodes and the
    text nodes directly inside its text:span children; spaces (text:s), tabs and line breaks are
    dropped."""
    from odf import opendocument
    from odf.text import P

    document = load(path, opendocument.load, ".odt")
    texts = []
    for paragraph in document.getElementsByType(P):
        parts = []
        for node in paragraph.childNodes:
            if node.nodeType == node.TEXT_NODE:
                parts.append(node.data)
            elif node.nodeType == node.ELEMENT_NODE and node.tagName == "text:span":
                parts += [c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE]
        texts.append("".join(parts))
    return texts


def paragraph_texts(path: str) -> list[str]:
    """Body paragraph texts of a .docx or .odt file, in order."""
    if str(path).endswith(".odt"):
        return odt_paragraphs(path)
    return [p.text for p in open_docx(path).paragraphs]


def body_text(texts: Iterable[str]) -> str:
    """Paragraphs joined, with every run of whitespace (line breaks included) collapsed to one
    space."""
    return re.sub(r"\s+", " ", "\n".join(texts)).strip()


def texts_equal(path1: str, path2: str) -> bool:
    """compare_docx_files with its defaults: the gate of OSWorld's formatting metrics."""
    return compare_docx_files(path1, path2) == 1.0


# --- text comparison
# ---------------------------------------------------------------------------------------


def both_of_kind(file1: str, file2: str, *kinds: str) -> str | None:
    """The extension both files end with (case-sensitive, as OSWorld checks), if one of `kinds`."""
    for kind in kinds:
        if str(file1).endswith(kind) and str(file2).endswith(kind):
            return kind
    return None


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
    **_ignored,
) -> float:
    """Paragraph text of two Writer files (both .docx or both .odt). With `ignore_blanks` (the
    default) the whole texts are compared with whitespace collapsed; `content_only`/`fuzzy_match`
    give their similarity. Without it paragraphs are compared pairwise (`fuzzy_match`: their mean
    similarity)."""
    if not both_of_kind(file1, file2, ".docx", ".odt"):
        logger.info(
            "compare_docx_files scores 0: %s and %s are not both .docx or .odt", file1, file2
        )
        return 0.0
    first, second = paragraph_texts(file1), paragraph_texts(file2)
    if ignore_order:
        first, second = sorted(first), sorted(second)
    if delete_empty_lines:
        first, second = [p for p in first if p.strip()], [p for p in second if p.strip()]
    fold = str.lower if ignore_case else str
    if content_only or ignore_blanks:
        text1, text2 = fold(body_text(first)), fold(body_text(second))
        if content_only or fuzzy_match:
            return fuzz.ratio(text1, text2) / 100
        return float(text1 == text2)
    if len(first) != len(second):
        return 0.0
    if fuzzy_match:
        if not first:
            return 1.0
        pairs = zip(first, second, strict=True)
        return sum(fuzz.ratio(fold(a), fold(b)) / 100 for a, b in pairs) / len(first)
    return float(all(fold(a) == fold(b) for a, b in zip(first, second, strict=True)))


@file_metric("compare_docx_files_and_ignore_new_lines", files=2)
def compare_docx_files_and_ignore_new_lines(
    file1: str, file2: str, ignore_blanks: bool = True, **_ignored
) -> float:
    """.docx texts without their empty paragraphs: collapsed whitespace equal, or (no
    `ignore_blanks`) the same paragraphs."""
    if not both_of_kind(file1, file2, ".docx"):
        return 0.0
    first, second = [[t for t in paragraph_texts(path) if t != ""] for path in (file1, file2)]
    if ignore_blanks:
        return float(body_text(first) == body_text(second))
    return float(first == second)


@file_metric("compare_references", files=2)
def compare_references(
    file1: str,
    file2: str,
    reference_indicator: str = "References",
    reference_base_result: float = 0.5,
    **_ignored,
) -> float:
    """Mean similarity of the items after the first `reference_indicator` paragraph, rescaled so
    `reference_base_result` scores 0 (and anything below it plus 0.01 scores 0)."""
    if not both_of_kind(file1, file2, ".docx"):
        return 0.0
    first, second = paragraph_texts(file1), paragraph_texts(file2)
    starts = [
        t.index(reference_indicator) if reference_indicator in t else -1 for t in (first, second)
    ]
    if starts == [-1, -1]:
        return 1.0
    if -1 in starts:
        return 0.0
    refs1 = [p for p in first[starts[0] + 1 :] if p.strip()]
    refs2 = [p for p in second[starts[1] + 1 :] if p.strip()]
    if len(refs1) != len(refs2):
        return 0.0
    similarity = sum(fuzz.ratio(a, b) / 100 for a, b in zip(refs1, refs2, strict=True))
    similarity /= len(refs1)
    if similarity >= reference_base_result + 0.01:
        return (similarity - reference_base_result) / (1 - reference_base_result)
    return 0.0


def train_lines(path: str) -> tuple[list[str], list[str]]:
    """The non-empty stripped paragraphs, and the train id (2nd field) of those with four fields."""
    lines = [t.strip() for t in paragraph_texts(path) if t.strip()]
    return lines, [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]


@metric("compare_unique_train_records")
def compare_unique_train_records(processed: str | None, expected, **_ignored) -> float:
    """Duplicated trains removed: `expected` is [gold, initial]; every kept line comes from the
    initial file, train ids are unique and the gold's, and there are as many lines as in the
    gold."""
    if not processed or not isinstance(expected, list) or len(expected) < 2:
        return 0.0
    gold, initial = expected[0], expected[1]
    if not gold or not initial:
        return 0.0
    try:
        lines, ids = train_lines(processed)
        gold_lines, gold_ids = train_lines(gold)
        initial_lines, _ = train_lines(initial)
    except UnreadableFile as exc:
        logger.info("compare_unique_train_records scores 0: %s", exc)
        return 0.0
    return float(
        set(lines) <= set(initial_lines)
        and len(ids) == len(set(ids))
        and set(ids) == set(gold_ids)
        and len(lines) == len(gold_lines)
    )


@file_metric("fuzzy_place_math")
def fuzzy_place_math(file: str, rules: dict) -> float:
    """Exactly three words in the .docx; the mean of each word's best similarity to an expected
    answer."""
    words = [w for p in open_docx(file).paragraphs for w in p.text.split()]
    if len(words) != 3:
        return 0.0
    answers = rules["expected"]
    return sum(max([0.0] + [fuzz.ratio(w, a) / 100 for a in answers]) for w in words) / 3


# Registered here so importing this module is enough to get every Writer metric.
