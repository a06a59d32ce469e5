"""Writer metrics about document structure (tables, images, breaks, footers, tab stops, equations) and the
LibreOffice settings checks that read `registrymodifications.xcu`.

Same conventions as `tasks.metrics.documents`, which imports this module so its metrics get registered:
missing or unreadable files score 0.0 with a logged reason.
"""

from __future__ import annotations

import io
import re

from PIL import Image, UnidentifiedImageError

from tasks.metrics.documents import (
    NS,
    W_NS,
    UnreadableFile,
    body_text,
    color_matches,
    file_metric,
    load_xml,
    open_docx,
    texts_equal,
)


def table_cells(path: str) -> list[list[list[str]]]:
    """Each table of the body as rows of stripped cell texts."""
    return [
        [[cell.text.strip() for cell in row.cells] for row in table.rows]
        for table in open_docx(path).tables
    ]


@file_metric("compare_docx_tables", files=2)
def compare_docx_tables(file1: str, file2: str) -> float:
    """Same number of tables, each with the same shape and cell texts."""
    return float(table_cells(file1) == table_cells(file2))


def docx_images(path: str) -> list[Image.Image]:
    """The pictures shown in the body, in document order, decoded."""
    document = open_docx(path)
    images = []
    for blip in document.element.body.iter(
        "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"
    ):
        rel_id = blip.get(
            "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"
        )
        if rel_id not in document.part.related_parts:
            continue
        try:
            images.append(
                Image.open(io.BytesIO(document.part.related_parts[rel_id].blob)).convert("RGBA")
            )
        except (UnidentifiedImageError, OSError) as exc:
            raise UnreadableFile(f"an image in {path} cannot be decoded ({exc})") from None
    return images


@file_metric("compare_docx_images", files=2)
def compare_docx_images(file1: str, file2: str) -> float:
    """The same pictures, pixel for pixel, in the same order (the file encoding may differ)."""
    result, gold = docx_images(file1), docx_images(file2)
    if len(result) != len(gold):
        return 0.0
    for mine, theirs in zip(result, gold, strict=False):
        if mine.size != theirs.size or mine.tobytes() != theirs.tobytes():
            return 0.0
    return 1.0


@file_metric("compare_insert_equation", files=2)
def compare_insert_equation(file1: str, file2: str) -> float:
    """The text matches the gold and the result holds at least as many equations (OMML) as the gold."""
    if not texts_equal(file1, file2):
        return 0.0

    def equations(path: str) -> int:
        return len(open_docx(path).element.body.findall(".//m:oMath", NS))

    found = equations(file1)
    return float(found > 0 and found >= equations(file2))


@file_metric("contains_page_break")
def contains_page_break(file: str, rules: dict) -> float:
    """The document holds exactly `rules['page_break_count']` page breaks (explicit breaks and
    paragraphs that start on a new page)."""
    body = open_docx(file).element.body
    breaks = len(body.findall(f".//w:br[@{{{W_NS}}}type='page']", NS))
    breaks += sum(
        1
        for flag in body.findall(".//w:pPr/w:pageBreakBefore", NS)
        if flag.get(f"{{{W_NS}}}val") != "false"
    )
    return float(breaks == int(rules["page_break_count"]))


def has_page_field(element) -> bool:
    """A PAGE field, simple or complex, anywhere under `element`."""
    instructions = [f.get(f"{{{W_NS}}}instr", "") for f in element.iter(f"{{{W_NS}}}fldSimple")]
    instructions += [t.text or "" for t in element.iter(f"{{{W_NS}}}instrText")]
    return any(re.match(r"\s*PAGE\b", instruction) for instruction in instructions)


@file_metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(file: str) -> float:
    """Every section's footer shows the page number."""
    sections = open_docx(file).sections
    # A linked footer reads its definition from the previous section, which python-docx resolves for us.
    return float(
        bool(sections) and all(has_page_field(section.footer._element) for section in sections)
    )


@file_metric("check_tabstops", files=2)
def check_tabstops(
    file1: str, file2: str, word_number_split_by_tabstop: int = 1, index: int = 0
) -> float:
    """Where the gold paragraph uses tab stops, the result has the same text split by a tab after the first
    `word_number_split_by_tabstop` words, and its tab stop number `index` has the gold's alignment."""
    result, gold = open_docx(file1).paragraphs, open_docx(file2).paragraphs
    if len(result) != len(gold):
        return 0.0
    for mine, theirs in zip(result, gold, strict=False):
        if body_text([mine.text]) != body_text([theirs.text]):
            return 0.0
        gold_stops = theirs.paragraph_format.tab_stops
        if len(gold_stops) <= index:
            continue
        stops = mine.paragraph_format.tab_stops
        if len(stops) <= index or stops[index].alignment != gold_stops[index].alignment:
            return 0.0
        head = mine.text.split("\t", 1)
        if len(head) < 2 or len(head[0].split()) != word_number_split_by_tabstop:
            return 0.0
    return 1.0


@file_metric("evaluate_colored_words_in_tables", files=2)
def evaluate_colored_words_in_tables(file1: str, file2: str) -> float:
    """Tables keep the gold's text; words that start with a vowel are red, the others blue."""
    if table_cells(file1) != table_cells(file2):
        return 0.0
    words = 0
    for table in open_docx(file1).tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        if not run.text.strip():
                            continue
                        words += 1
                        color = run.font.color.rgb if run.font.color.type is not None else None
                        wanted = "red" if run.text.strip()[0].lower() in "aeiou" else "blue"
                        if not color_matches(str(color) if color is not None else None, wanted):
                            return 0.0
    return float(words > 0)


# --- LibreOffice settings (registrymodifications.xcu) ------------------------------------------------------

OOR = "http://openoffice.org/2001/registry"


def xcu_value(path: str, item_path: str, prop: str) -> str | None:
    """The value LibreOffice stored for `prop` under `item_path`, or None when it keeps the default."""
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
    """Impress's presenter console is switched off."""
    value = xcu_value(file, "/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen")
    return float(value == "false")


@file_metric("check_auto_saving_time")
def check_auto_saving_time(file: str, rules: dict) -> float:
    """AutoRecovery saves every `rules['minutes']` minutes (and is not switched off)."""
    interval = xcu_value(file, "/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall")
    enabled = xcu_value(file, "/org.openoffice.Office.Recovery/AutoSave", "Enabled")
    return float(
        interval is not None and interval.strip() == str(rules["minutes"]) and enabled != "false"
    )
