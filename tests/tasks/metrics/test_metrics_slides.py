"""Impress metrics over .pptx decks generated on the fly with python-pptx."""

from __future__ import annotations

import io
import math

import pptx
import pytest
from lxml import etree
from PIL import Image
from pptx.dml.color import RGBColor
from pptx.enum.text import PP_ALIGN
from pptx.util import Inches, Pt

from tasks.metrics.registry import get_metric

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"


def png() -> io.BytesIO:
    buffer = io.BytesIO()
    Image.new("RGB", (20, 10), "green").save(buffer, "PNG")
    buffer.seek(0)
    return buffer


def write_deck(path, change=None) -> str:
    """Two slides: a title+body slide, and a slide with a text box, a picture, a table and notes."""
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Agenda"
    body = first.placeholders[1].text_frame
    body.text = "Welcome"
    run = body.paragraphs[0].runs[0]
    run.font.name, run.font.size, run.font.bold, run.font.italic = "Arial", Pt(24), False, False
    run.font.color.rgb = RGBColor(0x10, 0x20, 0x30)
    second = deck.slides.add_slide(deck.slide_layouts[6])
    box = second.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "Key numbers"
    second.shapes.add_picture(png(), Inches(1), Inches(3), Inches(2), Inches(1))
    grid = second.shapes.add_table(2, 2, Inches(5), Inches(3), Inches(4), Inches(1)).table
    grid.cell(0, 0).text = "Q1"
    second.notes_slide.notes_text_frame.text = "Say hello."
    if change:
        change(deck)
    deck.save(path)
    return str(path)


def score(name, *args, **options) -> float:
    return get_metric(name)(*args, **options)


def first_run(deck):
    return deck.slides[0].placeholders[1].text_frame.paragraphs[0].runs[0]


def set_strike(deck):
    first_run(deck).font._rPr.set("strike", "sngStrike")


def add_bullet(deck):
    paragraph = first_run(deck)._r.getparent()
    ppr = paragraph.find(f"{{{A}}}pPr")
    if ppr is None:
        ppr = etree.SubElement(paragraph, f"{{{A}}}pPr")
        paragraph.insert(0, ppr)
    etree.SubElement(ppr, f"{{{A}}}buChar", char="•")


def set_background(deck):
    fill = deck.slides[0].background.fill
    fill.solid()
    fill.fore_color.rgb = RGBColor(0xFF, 0xFF, 0x00)


def add_slide(deck):
    deck.slides.add_slide(deck.slide_layouts[6])


def picture(deck):
    return deck.slides[1].shapes[1]


# flag -> a change to the deck that only that flag notices
DIFFERENCES = {
    "text": lambda d: setattr(first_run(d), "text", "Welcome!"),
    "font_name": lambda d: setattr(first_run(d).font, "name", "Courier New"),
    "font_size": lambda d: setattr(first_run(d).font, "size", Pt(30)),
    "font_bold": lambda d: setattr(first_run(d).font, "bold", True),
    "font_italic": lambda d: setattr(first_run(d).font, "italic", True),
    "color_rgb": lambda d: setattr(first_run(d).font.color, "rgb", RGBColor(0xFF, 0, 0)),
    "font_underline": lambda d: setattr(first_run(d).font, "underline", True),
    "strike_through": set_strike,
    "alignment": lambda d: setattr(
        d.slides[0].placeholders[1].text_frame.paragraphs[0], "alignment", PP_ALIGN.CENTER
    ),
    "indent": lambda d: setattr(d.slides[0].placeholders[1].text_frame.paragraphs[0], "level", 2),
    "run_count": lambda d: d.slides[0].placeholders[1].text_frame.paragraphs[0].add_run(),
    "bullets": add_bullet,
    "background_color": set_background,
    "note": lambda d: setattr(d.slides[1].notes_slide.notes_text_frame, "text", "Say goodbye."),
    "number_of_slides": add_slide,
    "shape": lambda d: setattr(d.slides[1].shapes[0], "left", Inches(2)),
}


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    return write_deck(tmp_path_factory.mktemp("gold") / "gold.pptx")


def test_identical_decks_match(tmp_path, gold):
    assert score("compare_pptx_files", write_deck(tmp_path / "same.pptx"), gold) == 1.0


# OSWorld's bullet check compares every paragraph's text of the slide, so a text change fails even
# with
# examine_text off; the differential cases (tests/osworld_cases/slides) pin that down.
@pytest.mark.parametrize("flag", sorted(set(DIFFERENCES) - {"text"}))
def test_each_examined_difference_fails_only_when_examined(tmp_path, gold, flag):
    changed = write_deck(tmp_path / f"{flag}.pptx", DIFFERENCES[flag])
    assert score("compare_pptx_files", changed, gold) == 0.0
    assert score("compare_pptx_files", changed, gold, **{f"examine_{flag}": False}) == 1.0


POSITION_CHANGES = {
    "right_position": lambda d: setattr(picture(d), "left", Inches(4)),
    "image_size": lambda d: setattr(picture(d), "width", Inches(3)),
    "modify_height": lambda d: setattr(picture(d), "height", Inches(2)),
    "table_bottom_position": lambda d: setattr(d.slides[1].shapes[2], "top", Inches(6)),
}


@pytest.mark.parametrize("flag", sorted(POSITION_CHANGES))
def test_position_flags_are_off_by_default_and_work_without_shape(tmp_path, gold, flag):
    changed = write_deck(tmp_path / f"{flag}.pptx", POSITION_CHANGES[flag])
    assert score("compare_pptx_files", changed, gold, examine_shape=False) == 1.0
    assert (
        score("compare_pptx_files", changed, gold, examine_shape=False, **{f"examine_{flag}": True})
        == 0.0
    )


def test_bad_inputs(tmp_path, gold):
    corrupt = tmp_path / "broken.pptx"
    corrupt.write_bytes(b"not a zip at all")
    assert score("compare_pptx_files", None, gold) == 0.0
    assert score("compare_pptx_files", str(tmp_path / "absent.pptx"), gold) == 0.0
    assert score("compare_pptx_files", str(corrupt), gold) == 0.0
    assert score("compare_pptx_files", gold, gold, _note="a comment in the task file") == 1.0


def with_transition(name):
    def change(deck):
        transition = etree.SubElement(deck.slides[0]._element, f"{{{P}}}transition")
        etree.SubElement(transition, f"{{{P}}}{name}")

    return change


def test_transition(tmp_path):
    deck = write_deck(tmp_path / "t.pptx", with_transition("dissolve"))
    assert score("check_transition", deck, {"slide_idx": 0, "transition_type": "dissolve"}) == 1.0
    assert score("check_transition", deck, {"slide_idx": 1, "transition_type": "dissolve"}) == 0.0
    other = write_deck(tmp_path / "o.pptx", with_transition("fade"))
    assert score("check_transition", other, {"slide_idx": 0, "transition_type": "dissolve"}) == 0.0


def numbered(color):
    def change(deck):
        for slide in deck.slides:
            box = slide.shapes.add_textbox(Inches(9), Inches(7), Inches(1), Inches(0.5))
            paragraph = box.text_frame.paragraphs[0]._p
            field = etree.SubElement(
                paragraph, f"{{{A}}}fld", id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}"
            )
            field.set("type", "slidenum")
            rpr = etree.SubElement(field, f"{{{A}}}rPr", lang="en-US")
            etree.SubElement(
                etree.SubElement(rpr, f"{{{A}}}solidFill"), f"{{{A}}}srgbClr", val=color
            )
            etree.SubElement(field, f"{{{A}}}t").text = "1"

    return change


def test_orientation_and_background_distance(tmp_path):
    def portrait(deck):
        deck.slide_width, deck.slide_height = Inches(7.5), Inches(10)

    assert (
        score("check_slide_orientation_Portrait", write_deck(tmp_path / "p.pptx", portrait)) == 1.0
    )
    assert score("check_slide_orientation_Portrait", write_deck(tmp_path / "l.pptx")) == 0.0

    def blue(deck):
        for slide in deck.slides:
            slide.background.fill.solid()
            slide.background.fill.fore_color.rgb = RGBColor(0x2A, 0x60, 0x99)

    rules = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}
    assert (
        score(
            "evaluate_presentation_fill_to_rgb_distance",
            write_deck(tmp_path / "b.pptx", blue),
            rules,
        )
        # OSWorld's score: 1 minus the colour's distance to rgb as a share of black-to-white.
        == pytest.approx(1 - math.dist((0x2A, 0x60, 0x99), (0, 0, 255)) / math.sqrt(3 * 255**2))
    )
    assert (
        score("evaluate_presentation_fill_to_rgb_distance", write_deck(tmp_path / "w.pptx"), rules)
        == 0.0
    )
