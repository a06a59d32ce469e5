"""PDF metrics: OSWorld's `compare_pdfs`, `check_pdf_pages` and `compare_pdf_images`, read with
pypdf.

Conventions as in `tasks.metrics.documents`: paths (or None) first, then the task's options; a
missing or unreadable file scores 0.0 with a logged reason.
"""

from __future__ import annotations

import io
import operator
import re
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError
from pypdf import PdfReader
from pypdf.errors import PyPdfError
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.documents import UnreadableFile, file_metric, load, logger, ratio

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
    """Each page's extracted text with whitespace collapsed (layout engines space words
    differently)."""
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


def joined_text(path: str) -> str:
    """All pages' text, each line ending in a newline as PyMuPDF gives it, joined and stripped."""
    try:
        pages = [page.extract_text() or "" for page in open_pdf(path).pages]
    except PyPdfError as exc:
        raise UnreadableFile(f"the text of {path} cannot be extracted ({exc})") from None
    return "".join(line + "\n" for text in pages for line in text.splitlines()).strip()


@file_metric("compare_pdfs", files=2)
def compare_pdfs(pdf1: str | list[str], pdf2: str | list[str]) -> float:
    """Text similarity of the whole documents (all pages joined), averaged over the pairs when the
    getters give lists (a pair that cannot be read counts 0; the mean is over the gold list)."""
    if not isinstance(pdf2, list):
        pdf1, pdf2 = [pdf1], [pdf2]
    if not pdf2:
        raise StateActError("compare_pdfs got an empty list of gold files")
    total = 0.0
    for mine, gold in zip(pdf1, pdf2, strict=False):
        try:
            total += fuzz.ratio(joined_text(mine), joined_text(gold)) / 100
        except Exception as exc:  # noqa: BLE001 -- as in OSWorld, an unreadable pair counts 0
            logger.info("compare_pdfs: a pair counts 0: %s", exc)
    return total / len(pdf2)


@file_metric("check_pdf_pages")
def check_pdf_pages(pdf: str, rules: dict) -> float:
    """The page count stands in `rules['relation']` (eq, ne, lt, le, gt, ge) to
    `rules['ref_value']`."""
    relation = rules.get("relation", "eq")
    if relation not in RELATIONS:
        raise StateActError(
            f"check_pdf_pages has no relation {relation!r}; use one of {sorted(RELATIONS)}"
        )
    return float(RELATIONS[relation](len(open_pdf(pdf).pages), int(rules["ref_value"])))


PHASH_THRESHOLD = 5


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
def compare_pdf_images(pdf1: str, pdf2: str, **_ignored) -> float:
    """The same number of images, page by page; the share of pairs whose perceptual hashes (pHash)
    differ in at most 5 bits. Two PDFs without images match."""
    from tasks.metrics.video import phash

    if not Path(pdf1).exists() or not Path(pdf2).exists():
        return 0.0
    result, gold = pdf_images(pdf1), pdf_images(pdf2)
    if len(result) != len(gold):
        return 0.0
    if not result:
        return 1.0
    close = sum(
        int(np.count_nonzero(phash(a) != phash(b))) <= PHASH_THRESHOLD
        for a, b in zip(result, gold, strict=True)
    )
    return close / len(result)
