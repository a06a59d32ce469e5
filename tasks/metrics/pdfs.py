"""PDF metrics: OSWorld's `compare_pdfs`, `check_pdf_pages` and `compare_pdf_images`, read with pypdf.

Conventions as in `tasks.metrics.documents`: paths (or None) first, then the task's options; a missing or
unreadable file scores 0.0 with a logged reason.
"""

from __future__ import annotations

import io
import operator
import re

from PIL import Image, ImageChops, ImageStat, UnidentifiedImageError
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from harness.kernel.core import StateActError
from tasks.metrics.documents import UnreadableFile, file_metric, load, ratio

RELATIONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def open_pdf(path: str) -> PdfReader:
    def read(p: str) -> PdfReader:
        reader = PdfReader(p)
        _ = len(reader.pages)  # pypdf parses lazily; make a broken file fail here, not mid-metric
        return reader

    try:
        return load(path, read, "PDF")
    except PyPdfError as exc:
        raise UnreadableFile(f"{path} is not a readable PDF file ({exc})") from None


def page_texts(path: str) -> list[str]:
    """Each page's extracted text with whitespace collapsed (layout engines space words differently)."""
    try:
        return [
            re.sub(r"\s+", " ", page.extract_text() or "").strip() for page in open_pdf(path).pages
        ]
    except PyPdfError as exc:
        raise UnreadableFile(f"the text of {path} cannot be extracted ({exc})") from None


def pdf_similarity(result: str, gold: str) -> float:
    """Mean text similarity of paired pages; pages only one file has count 0."""
    mine, theirs = page_texts(result), page_texts(gold)
    if not mine and not theirs:
        return 1.0
    return sum(ratio(a, b) for a, b in zip(mine, theirs, strict=False)) / max(
        len(mine), len(theirs)
    )


@file_metric("compare_pdfs", files=2)
def compare_pdfs(pdf1: str | list[str], pdf2: str | list[str]) -> float:
    """Fraction in [0, 1]: how closely the text of each page matches the gold's (averaged over pages, and over
    files when the getters give lists)."""
    if isinstance(pdf1, list) != isinstance(pdf2, list) or (
        isinstance(pdf1, list) and len(pdf1) != len(pdf2)
    ):
        raise StateActError("compare_pdfs needs two single files or two lists of the same length")
    pairs = list(zip(pdf1, pdf2, strict=False)) if isinstance(pdf1, list) else [(pdf1, pdf2)]
    if not pairs:
        return 0.0
    return sum(pdf_similarity(mine, gold) for mine, gold in pairs) / len(pairs)


@file_metric("check_pdf_pages")
def check_pdf_pages(pdf: str, rules: dict) -> float:
    """The page count stands in `rules['relation']` (eq, ne, lt, le, gt, ge) to `rules['ref_value']`."""
    relation = rules.get("relation", "eq")
    if relation not in RELATIONS:
        raise StateActError(
            f"check_pdf_pages has no relation {relation!r}; use one of {sorted(RELATIONS)}"
        )
    return float(RELATIONS[relation](len(open_pdf(pdf).pages), int(rules["ref_value"])))


def pdf_images(path: str) -> list[Image.Image]:
    """Every raster image placed on the pages, in page order, as RGB."""
    images = []
    try:
        for page in open_pdf(path).pages:
            for placed in page.images:
                images.append(Image.open(io.BytesIO(placed.data)).convert("RGB"))
    except (PyPdfError, UnidentifiedImageError, OSError, ValueError) as exc:
        raise UnreadableFile(f"the images of {path} cannot be decoded ({exc})") from None
    return images


@file_metric("compare_pdf_images", files=2)
def compare_pdf_images(pdf1: str, pdf2: str, tolerance: float = 0.02) -> float:
    """The same images in the same order: equal sizes, and a mean pixel difference of at most `tolerance`
    (a fraction of full scale, so re-encoding the JPEG still passes)."""
    result, gold = pdf_images(pdf1), pdf_images(pdf2)
    if not gold or len(result) != len(gold):
        return 0.0
    for mine, theirs in zip(result, gold, strict=False):
        if mine.size != theirs.size:
            return 0.0
        mean_difference = sum(ImageStat.Stat(ImageChops.difference(mine, theirs)).mean) / 3
        if mean_difference > tolerance * 255:
            return 0.0
    return 1.0
