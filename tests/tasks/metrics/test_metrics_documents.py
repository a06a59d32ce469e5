"""Writer metrics over .docx/.odt files generated on the fly."""

from __future__ import annotations

import io

import docx
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_TAB_ALIGNMENT
from docx.oxml import parse_xml
from docx.shared import Pt, RGBColor
from PIL import Image

from harness.kernel.core import StateActError
from tasks.metrics.registry import get_metric

PARAGRAPHS = ["Quarterly report", "Sales rose by ten percent.", "", "Costs stayed flat."]


def write_docx(path, paragraphs=PARAGRAPHS, build=None) -> str:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if build:
        build(document)
    document.save(path)
    return str(path)


def write_odt(path, paragraphs) -> str:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    for text in paragraphs:
        document.text.addElement(P(text=text))
    document.save(str(path))
    return str(path)


def score(name, *args, **options) -> float:
    return get_metric(name)(*args, **options)


@pytest.fixture
def gold(tmp_path):
    return write_docx(tmp_path / "gold.docx")


def test_identical_documents_match(tmp_path, gold):
    assert score("compare_docx_files", write_docx(tmp_path / "r.docx"), gold) == 1.0


def test_changed_text_fails(tmp_path, gold):
    changed = write_docx(
        tmp_path / "r.docx", ["Quarterly report", "Sales fell.", "", "Costs stayed flat."]
    )
    assert score("compare_docx_files", changed, gold) == 0.0


def test_blanks_are_ignored_by_default_only(tmp_path, gold):
    spaced = write_docx(
        tmp_path / "r.docx",
        ["Quarterly  report", "Sales rose by ten percent. ", "Costs stayed flat."],
    )
    assert score("compare_docx_files", spaced, gold) == 1.0
    assert score("compare_docx_files", spaced, gold, ignore_blanks=False) == 0.0


def test_case_order_and_empty_lines_options(tmp_path, gold):
    upper = write_docx(tmp_path / "u.docx", [p.upper() for p in PARAGRAPHS])
    assert score("compare_docx_files", upper, gold) == 0.0
    assert score("compare_docx_files", upper, gold, ignore_case=True) == 1.0
    shuffled = write_docx(tmp_path / "s.docx", list(reversed(PARAGRAPHS)))
    assert score("compare_docx_files", shuffled, gold, ignore_blanks=False) == 0.0
    assert (
        score("compare_docx_files", shuffled, gold, ignore_blanks=False, ignore_order=True) == 1.0
    )
    no_empty = write_docx(tmp_path / "e.docx", [p for p in PARAGRAPHS if p])
    assert score("compare_docx_files", no_empty, gold, ignore_blanks=False) == 0.0
    assert (
        score("compare_docx_files", no_empty, gold, ignore_blanks=False, delete_empty_lines=True)
        == 1.0
    )


def test_fuzzy_options_give_fractions(tmp_path, gold):
    close = write_docx(
        tmp_path / "r.docx",
        ["Quarterly report", "Sales rose by 10 percent.", "", "Costs stayed flat."],
    )
    content = score("compare_docx_files", close, gold, content_only=True)
    fuzzy = score("compare_docx_files", close, gold, fuzzy_match=True)
    assert 0.8 < content < 1.0 and 0.8 < fuzzy < 1.0
    assert score("compare_docx_files", gold, gold, fuzzy_match=True) == 1.0


def test_odt_files_compare_and_formats_must_agree(tmp_path, gold):
    odt = write_odt(tmp_path / "r.odt", PARAGRAPHS)
    assert score("compare_docx_files", odt, write_odt(tmp_path / "g.odt", PARAGRAPHS)) == 1.0
    assert score("compare_docx_files", odt, write_odt(tmp_path / "x.odt", ["other"])) == 0.0
    assert score("compare_docx_files", odt, gold) == 0.0


def test_missing_and_corrupt_files_score_zero(tmp_path, gold):
    corrupt = tmp_path / "broken.docx"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    assert score("compare_docx_files", None, gold) == 0.0
    assert score("compare_docx_files", str(tmp_path / "absent.docx"), gold) == 0.0
    assert score("compare_docx_files", str(corrupt), gold) == 0.0
    assert score("compare_font_names", str(corrupt), {"font_name": "Arial"}) == 0.0


def test_unknown_option_is_a_clear_error(gold):
    with pytest.raises(StateActError, match="no option 'ignore_colour'"):
        score("compare_line_spacing", gold, gold, ignore_colour=True)
    assert score("compare_docx_files", gold, gold, _note="comment keys are ignored") == 1.0


def test_ignore_new_lines(tmp_path, gold):
    joined = write_docx(
        tmp_path / "r.docx", ["Quarterly report Sales rose by ten percent.", "Costs stayed flat."]
    )
    assert score("compare_docx_files_and_ignore_new_lines", joined, gold) == 1.0
    assert (
        score(
            "compare_docx_files_and_ignore_new_lines", gold, write_docx(tmp_path / "x.docx", ["x"])
        )
        == 0.0
    )


def set_font(name):
    def build(document):
        for paragraph in document.paragraphs:
            for run in paragraph.runs:
                run.font.name = name

    return build


def test_font_names(tmp_path):
    rules = {"font_name": "Times New Roman"}
    assert (
        score(
            "compare_font_names",
            write_docx(tmp_path / "a.docx", build=set_font("Times New Roman")),
            rules,
        )
        == 1.0
    )
    assert (
        score("compare_font_names", write_docx(tmp_path / "b.docx", build=set_font("Arial")), rules)
        == 0.0
    )

    def via_style(document):
        document.styles["Normal"].font.name = "Times New Roman"

    # OSWorld reads each run's own font name: a font set through the style does not count.
    assert (
        score("compare_font_names", write_docx(tmp_path / "c.docx", build=via_style), rules) == 0.0
    )


def spacing(value):
    def build(document):
        document.paragraphs[0].paragraph_format.line_spacing = value

    return build


def test_line_spacing(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=spacing(2.0))
    assert (
        score("compare_line_spacing", write_docx(tmp_path / "a.docx", build=spacing(2.0)), gold)
        == 1.0
    )
    assert (
        score("compare_line_spacing", write_docx(tmp_path / "b.docx", build=spacing(1.5)), gold)
        == 0.0
    )


def water(subscript):
    def build(document):
        paragraph = document.add_paragraph("Drink H")
        paragraph.add_run("2").font.subscript = subscript
        paragraph.add_run("O daily.")

    return build


def test_subscript_contains(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=water(True))
    assert (
        score(
            "compare_subscript_contains", write_docx(tmp_path / "a.docx", build=water(True)), gold
        )
        == 1.0
    )
    assert (
        score(
            "compare_subscript_contains", write_docx(tmp_path / "b.docx", build=water(False)), gold
        )
        == 0.0
    )


def test_page_numbers_in_footers(tmp_path):
    def numbered(document):
        footer = document.sections[0].footer.paragraphs[0]
        # OSWorld's proxy for a page number: a digit in the first footer paragraph's text.
        footer.add_run("Page 1")

    assert (
        score("has_page_numbers_in_footers", write_docx(tmp_path / "a.docx", build=numbered)) == 1.0
    )
    assert score("has_page_numbers_in_footers", write_docx(tmp_path / "b.docx")) == 0.0


def table(cells):
    def build(document):
        grid = document.add_table(rows=len(cells), cols=len(cells[0]))
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                grid.cell(r, c).text = text

    return build


def test_docx_tables(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=table([["Item", "Price"], ["Tea", "3"]]))
    same = write_docx(tmp_path / "a.docx", build=table([["Item", "Price"], ["Tea", "3"]]))
    other = write_docx(tmp_path / "b.docx", build=table([["Item", "Price"], ["Tea", "4"]]))
    assert score("compare_docx_tables", same, gold) == 1.0
    assert score("compare_docx_tables", other, gold) == 0.0


def picture(color):
    def build(document):
        buffer = io.BytesIO()
        Image.new("RGB", (8, 8), color).save(buffer, "PNG")
        buffer.seek(0)
        document.add_picture(buffer)

    return build


def test_docx_images(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=picture("red"))
    assert (
        score("compare_docx_images", write_docx(tmp_path / "a.docx", build=picture("red")), gold)
        == 1.0
    )
    assert (
        score("compare_docx_images", write_docx(tmp_path / "b.docx", build=picture("blue")), gold)
        == 0.0
    )
    assert score("compare_docx_images", write_docx(tmp_path / "c.docx"), gold) == 0.0


def test_insert_equation(tmp_path):
    def equation(document):
        # OSWorld counts an OLE object (w:object) inside a run, as LibreOffice saves Math formulas.
        w = f'xmlns:w="{docx.oxml.ns.nsmap["w"]}"'
        document.paragraphs[0].runs[0]._r.append(parse_xml(f"<w:object {w}/>"))

    gold = write_docx(tmp_path / "g.docx", build=equation)
    assert (
        score("compare_insert_equation", write_docx(tmp_path / "a.docx", build=equation), gold)
        == 1.0
    )
    assert score("compare_insert_equation", write_docx(tmp_path / "b.docx"), gold) == 0.0


def breaks(count):
    def build(document):
        for _ in range(count):
            document.paragraphs[0].add_run().add_break(WD_BREAK.PAGE)

    return build


def test_page_break_count(tmp_path):
    rules = {"page_break_count": 2}
    assert (
        score("contains_page_break", write_docx(tmp_path / "a.docx", build=breaks(2)), rules) == 1.0
    )
    assert (
        score("contains_page_break", write_docx(tmp_path / "b.docx", build=breaks(1)), rules) == 0.0
    )


def test_tabstops(tmp_path):
    def tabbed(split_after, alignment):
        def build(document):
            words = "one two three four five".split()
            paragraph = document.add_paragraph(
                " ".join(words[:split_after]) + "\t" + " ".join(words[split_after:])
            )
            paragraph.paragraph_format.tab_stops.add_tab_stop(Pt(400), alignment)

        return build

    gold = write_docx(tmp_path / "g.docx", [], build=tabbed(3, WD_TAB_ALIGNMENT.RIGHT))
    good = write_docx(tmp_path / "a.docx", [], build=tabbed(3, WD_TAB_ALIGNMENT.RIGHT))
    early = write_docx(tmp_path / "b.docx", [], build=tabbed(2, WD_TAB_ALIGNMENT.RIGHT))
    left = write_docx(tmp_path / "c.docx", [], build=tabbed(3, WD_TAB_ALIGNMENT.LEFT))
    options = {"word_number_split_by_tabstop": 3, "index": 0}
    assert score("check_tabstops", good, gold, **options) == 1.0
    assert score("check_tabstops", early, gold, **options) == 0.0
    assert score("check_tabstops", left, gold, **options) == 0.0


def colored_words(vowel_color):
    def build(document):
        grid = document.add_table(rows=1, cols=2)
        for cell, word, color in ((0, "apple", vowel_color), (1, "dog", RGBColor(0, 0, 0xFF))):
            grid.cell(0, cell).paragraphs[0].add_run(word).font.color.rgb = color

    return build


def test_colored_words_in_tables(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=colored_words(RGBColor(0xFF, 0, 0)))
    # OSWorld's threshold (CIEDE2000 3.5) accepts a near red, not LibreOffice's "Dark Red 2".
    red = write_docx(tmp_path / "a.docx", build=colored_words(RGBColor(0xFA, 0x05, 0x05)))
    green = write_docx(tmp_path / "b.docx", build=colored_words(RGBColor(0, 0xA0, 0)))
    assert score("evaluate_colored_words_in_tables", red, gold) == 1.0
    assert score("evaluate_colored_words_in_tables", green, gold) == 0.0


def test_first_line_centered(tmp_path):
    def center(document):
        document.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER

    assert score("is_first_line_centered", write_docx(tmp_path / "a.docx", build=center)) == 1.0
    assert score("is_first_line_centered", write_docx(tmp_path / "b.docx")) == 0.0


def styled_runs(italic_size=None, strike_last=False):
    def build(document):
        paragraph = document.add_paragraph("Plain then ")
        run = paragraph.add_run("slanted")
        run.italic = True
        run.font.size = italic_size
        last = document.add_paragraph()
        last.add_run("Redundant closing remark.").font.strike = strike_last

    return build


def test_italic_size_and_strike_through(tmp_path):
    gold = write_docx(tmp_path / "g.docx", build=styled_runs(Pt(14), True))
    good = write_docx(tmp_path / "a.docx", build=styled_runs(Pt(14), True))
    bad = write_docx(tmp_path / "b.docx", build=styled_runs(Pt(12), False))
    assert score("check_italic_font_size_14", good, gold) == 1.0
    assert score("check_italic_font_size_14", bad, gold) == 0.0
    assert score("evaluate_strike_through_last_paragraph", good, gold) == 1.0
    assert score("evaluate_strike_through_last_paragraph", bad, gold) == 0.0


def test_highlighted_text(tmp_path):
    def highlight(document):
        from docx.enum.text import WD_COLOR_INDEX

        document.add_paragraph().add_run("check this").font.highlight_color = WD_COLOR_INDEX.YELLOW

    gold = write_docx(tmp_path / "g.docx", build=highlight)
    assert (
        score("compare_highlighted_text", write_docx(tmp_path / "a.docx", build=highlight), gold)
        == 1.0
    )
    assert score("compare_highlighted_text", write_docx(tmp_path / "b.docx"), gold) == 0.0


def test_references_are_rescaled_from_the_base(tmp_path):
    from rapidfuzz import fuzz

    body = ["Essay text.", "References"]
    gold_ref = "Smith, J. (2020). A study of things. Journal of Stuff, 4(2), 1-10."
    near_ref = "Smith, J. 2020. A study of things. Journal of Stuff, 4(2), 1-10"
    gold = write_docx(tmp_path / "g.docx", body + [gold_ref])
    near = write_docx(tmp_path / "n.docx", body + [near_ref])
    far = write_docx(tmp_path / "f.docx", body + ["Doe (1999) unrelated"])
    options = {"content_only": True, "reference_base_result": 0.6}
    assert score("compare_references", gold, gold, **options) == 1.0
    expected = (fuzz.ratio(near_ref, gold_ref) / 100 - 0.6) / 0.4
    assert 0.0 < expected < 1.0
    assert score("compare_references", near, gold, **options) == pytest.approx(expected)
    assert score("compare_references", far, gold, **options) == 0.0


XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema">
{items}
</oor:items>"""


def write_xcu(path, *items) -> str:
    entries = [
        f'<item oor:path="{p}"><prop oor:name="{n}" oor:op="fuse"><value>{v}</value></prop></item>'
        for p, n, v in items
    ]
    path.write_text(XCU.format(items="\n".join(entries)))
    return str(path)


def test_libreoffice_settings(tmp_path):
    xcu = write_xcu(
        tmp_path / "registrymodifications.xcu",
        ("/org.openoffice.Office.Writer/DefaultFont", "Standard", "Times New Roman"),
        ("/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen", "false"),
        ("/org.openoffice.Office.Common/Save/Document", "AutoSaveTimeIntervall", "3"),
    )
    empty = write_xcu(tmp_path / "empty.xcu")
    assert score("find_default_font", xcu, {"font_name": "Times New Roman"}) == 1.0
    assert score("find_default_font", xcu, {"font_name": "Arial"}) == 0.0
    assert score("check_presenter_console_disable", xcu) == 1.0
    assert score("check_presenter_console_disable", empty) == 0.0
    assert score("check_auto_saving_time", xcu, {"minutes": 3}) == 1.0
    assert score("check_auto_saving_time", xcu, {"minutes": 5}) == 0.0
    (tmp_path / "bad.xcu").write_text("<oor:items")
    assert score("find_default_font", str(tmp_path / "bad.xcu"), {"font_name": "x"}) == 0.0
