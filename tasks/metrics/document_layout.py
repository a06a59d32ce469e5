"""Writer metrics about document structure (tables, images, breaks, footers, tab stops,
equations) and the LibreOffice settings checks that read `registrymodifications.xcu`.

Same conventions as `tasks.metrics.documents`, which imports this module so its metrics get
registered: missing or unreadable files score 0.0 with a logged reason.
"""

from __future__ import annotations

import io
import re

from docx.enum.text import WD_TAB_ALIGNMENT
from PIL import Image, UnidentifiedImageError

from tasks.metrics.documents import (
    W_NS,
    UnreadableFile,
    file_metric,
    load_xml,
    open_docx,
    texts_equal,
)


@file_metric("compare_docx_tables", files=2)
def compare_docx_tables(file1: str, file2: str) -> float:
    """Same number of tables, each with the same rows and columns and the same stripped cell
    texts."""
    tables1, tables2 = open_docx(file1).tables, open_docx(file2).tables
    if len(tables1) != len(tables2):
        return 0.0
    for table1, table2 in zip(tables1, tables2, strict=True):
        shape = (len(table1.rows), len(table1.columns))
        if shape != (len(table2.rows), len(table2.columns)):
            return 0.0
        for i in range(shape[0]):
            for j in range(shape[1]):
                if table1.cell(i, j).text.strip() != table2.cell(i, j).text.strip():
                    return 0.0
    return 1.0


def docx_images(path: str) -> list[bytes]:
    """The decoded pixels of every image the main document part relates to, in relationship
    order."""
    images = []
    for rel in open_docx(path).part.rels.values():
        if "image" in rel.reltype:
            try:
                images.append(Image.open(io.BytesIO(rel.target_part.blob)).tobytes())
            except (UnidentifiedImageError, OSError) as exc:
                raise UnreadableFile(f"an image in {path} cannot be decoded ({exc})") from None
    return images


@file_metric("compare_docx_images", files=2)
def compare_docx_images(file1: str, file2: str) -> float:
    """The same number of images with the same decoded pixel bytes, in relationship order."""
    return float(docx_images(file1) == docx_images(file2))


@file_metric("compare_insert_equation", files=2)
def compare_insert_equation(file1: str, file2: str) -> float:
    """Same text, and some pair of runs (same paragraph and position) both hold an OLE object
    (w:object)."""
    if not texts_equal(file1, file2):
        return 0.0
    for para1, para2 in zip(open_docx(file1).paragraphs, open_docx(file2).paragraphs, strict=False):
        for run1, run2 in zip(para1.runs, para2.runs, strict=False):
            if run1.element.xpath(".//w:object") and run2.element.xpath(".//w:object"):
                return 1.0
    return 0.0


@file_metric("contains_page_break")
def contains_page_break(file: str, rules: dict) -> float:
    """Some page break (w:br type=page inside a body paragraph's runs); with `page_break_count`,
    exactly that many."""
    w_type = f"{{{W_NS}}}type"
    count = sum(
        1
        for paragraph in open_docx(file).paragraphs
        for run in paragraph.runs
        for br in run.element.findall(f".//{{{W_NS}}}br")
        if br.get(w_type) == "page"
    )
    wanted = rules.get("page_break_count") if isinstance(rules, dict) else None
    if wanted is not None and count != wanted:
        return 0.0
    return float(count > 0)


@file_metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(file: str) -> float:
    """The first footer paragraph of every section holds a digit (OSWorld's proxy for a page
    number)."""
    for section in open_docx(file).sections:
        paragraphs = section.footer.paragraphs
        text = paragraphs[0].text if paragraphs else ""
        if not any(char.isdigit() for char in text):
            return 0.0
    return 1.0


def counted_tab_stops(paragraph) -> list:
    """A paragraph's tab stops without the cleared ones and a left stop at position 0."""
    return [
        stop
        for stop in paragraph.paragraph_format.tab_stops
        if not (
            stop.alignment == WD_TAB_ALIGNMENT.CLEAR
            or (stop.alignment == WD_TAB_ALIGNMENT.LEFT and stop.position == 0)
        )
    ]


@file_metric("check_tabstops", files=2)
def check_tabstops(
    file1: str,
    file2: str,
    word_number_split_by_tabstop: int | None = None,
    index: int = 0,
    **_ignored,
) -> float:
    """Non-empty paragraphs pair up with the same tab stop alignments; the score loses the
    positions' distance as a share of the text width. `word_number_split_by_tabstop`: each result
    paragraph's tab-separated piece `index` has that many words."""
    document1, document2 = open_docx(file1), open_docx(file2)
    para1 = [p for p in document1.paragraphs if p.text.strip()]
    para2 = [p for p in document2.paragraphs if p.text.strip()]
    if len(para1) != len(para2):
        return 0.0
    if word_number_split_by_tabstop is not None:
        for paragraph in para1:
            piece = paragraph.text.split("\t")[index]
            if (
                len([w for w in re.split(r"\s", piece) if w.strip()])
                != word_number_split_by_tabstop
            ):
                return 0.0
    section = document2.sections[0]
    width = section.page_width - section.left_margin - section.right_margin
    lost = 0.0
    for p1, p2 in zip(para1, para2, strict=True):
        tabs1, tabs2 = counted_tab_stops(p1), counted_tab_stops(p2)
        if len(tabs1) != len(tabs2):
            return 0.0
        difference = 0.0
        for t1, t2 in zip(tabs1, tabs2, strict=True):
            if t1.alignment != t2.alignment:
                return 0.0
            difference += abs(t1.position - t2.position)
        lost += difference / width
    if not para1:
        raise UnreadableFile(f"{file1} has no text to compare")
    return 1 - lost / len(para1)


# --- LibreOffice settings (registrymodifications.xcu)
# ------------------------------------------------------

OOR = "http://openoffice.org/2001/registry"


def xcu_value(path: str, item_path: str, prop: str) -> str | None:
    """The value LibreOffice stored for `prop` under `item_path`, or None when it keeps the
    default."""
    for item in load_xml(path).getroot().iter("item"):
        if item.get(f"{{{OOR}}}path") != item_path:
            continue
        for node in item.iter("prop"):
            if node.get(f"{{{OOR}}}name") == prop:
                value = node.find("value")
                return (value.text or "") if value is not None else None
    return None


@file_metric("find_default_font")
def find_default_font(file: str, rules: dict) -> float:
    """Writer's default (Standard) font is `rules['font_name']`."""
    return float(
        xcu_value(file, "/org.openoffice.Office.Writer/DefaultFont", "Standard")
        == rules["font_name"]
    )


@file_metric("check_presenter_console_disable")
def check_presenter_console_disable(file: str) -> float:
    """Impress's presenter console is switched off (the first such setting reads false, any
    case)."""
    for item in load_xml(file).getroot().iter("item"):
        if item.get(f"{{{OOR}}}path") != "/org.openoffice.Office.Impress/Misc/Start":
            continue
        for prop in item.findall("prop"):
            if prop.get(f"{{{OOR}}}name") == "EnablePresenterScreen":
                value = prop.find("value")
                return float(value is not None and (value.text or "").lower() == "false")
    return 0.0


@file_metric("check_auto_saving_time")
def check_auto_saving_time(file: str, rules: dict) -> float:
    """The document autosave interval (Common/Save/Document AutoSaveTimeIntervall) is `minutes`."""
    found = None
    for item in load_xml(file).getroot().iter("item"):
        if item.get(f"{{{OOR}}}path") != "/org.openoffice.Office.Common/Save/Document":
            continue
        for prop in item.iter("prop"):
            if prop.get(f"{{{OOR}}}name") == "AutoSaveTimeIntervall":
                found = prop.find(".//value").text
                break
    return float(found is not None and int(found) == rules["minutes"])
