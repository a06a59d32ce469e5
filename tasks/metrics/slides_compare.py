"""OSWorld's `compare_pptx_files`, step for step (desktop_env/evaluators/metrics/slides.py).

Both decks are walked in parallel — slides, shapes in order, paragraphs, runs — and the first
examined difference scores 0, else 1. OSWorld's leniencies are kept so verdicts agree: geometry
within a relative tolerance, shapes without text skip the geometry check, a missing alignment
counts as left, unset bold/italic count as false, colours compare only when both runs have an RGB
colour, outline levels 0 and 1 are equal, bullets compare without their colour, backgrounds
compare by solid fill colour, table cells compare formatting but not text.
docs/osworld-fidelity.md lists the oddities.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from lxml import etree
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.enum.text import PP_ALIGN

from tasks.metrics.documents import file_metric, logger
from tasks.metrics.slides import NS, open_pptx


@dataclass(frozen=True)
class Examine:
    """Which aspects are compared: OSWorld's `examine_*` options (names without the prefix)."""

    number_of_slides: bool = True
    shape: bool = True
    text: bool = True
    indent: bool = True
    font_name: bool = True
    font_size: bool = True
    font_bold: bool = True
    font_italic: bool = True
    color_rgb: bool = True
    font_underline: bool = True
    strike_through: bool = True
    alignment: bool = True
    title_bottom_position: bool = False
    table_bottom_position: bool = False
    run_count: bool = True
    right_position: bool = False
    top_position: bool = False
    shape_for_shift_size: bool = False
    image_size: bool = False
    modify_height: bool = False
    bullets: bool = True
    background_color: bool = True
    note: bool = True


class Mismatch(Exception):
    """The decks differ in an examined aspect."""


def near(a: int, b: int, tolerance: float) -> bool:
    """Equal within `tolerance` of the larger magnitude (a zero only equals a zero)."""
    if a == b:
        return True
    if a == 0 or b == 0:
        return False
    return abs(a - b) / max(abs(a), abs(b)) <= tolerance


def same_box(s1, s2, tolerance: float) -> bool:
    return all(
        near(getattr(s1, side), getattr(s2, side), tolerance)
        for side in ("left", "top", "width", "height")
    )


def fail_if(condition: bool, why: str) -> None:
    if condition:
        raise Mismatch(why)


def text_shapes(shapes) -> list:
    """Shapes with text, groups searched recursively (a group itself has no text)."""
    found = []
    for shape in shapes:
        if hasattr(shape, "text") and hasattr(shape, "text_frame"):
            found.append(shape)
        if hasattr(shape, "shapes"):
            found += text_shapes(shape.shapes)
    return found


def background_rgb(slide):
    fill = slide.background.fill
    if fill.type == 1:
        return fill.fore_color.rgb
    if fill.type == 5:
        master = slide.slide_layout.slide_master.background.fill
        return master.fore_color.rgb if master.type == 1 else None
    return None


def unset_or_false(a, b) -> bool:
    return a in (None, False) and b in (None, False)


def underline_differs(u1, u2) -> bool:
    if u1 == u2:
        return False
    return (u1 is not None and u2 is not None) or {u1, u2} == {None, True}


def visible_runs(p1, p2) -> tuple[list, list]:
    """The runs, or only those with text when both paragraphs are blank."""
    if (p1.text or "").strip() == "" and (p2.text or "").strip() == "":
        return (
            [r for r in p1.runs if (r.text or "").strip()],
            [r for r in p2.runs if (r.text or "").strip()],
        )
    return p1.runs, p2.runs


def alignment(paragraph):
    return PP_ALIGN.LEFT if paragraph.alignment is None else paragraph.alignment


def slide_bullets(xml: bytes) -> list[tuple]:
    """(level, bullet char, text) of every non-blank paragraph of a slide's XML."""
    bullets = []
    for paragraph in etree.fromstring(xml).iter(f"{{{NS['a']}}}p"):
        props = paragraph.find("a:pPr", NS)
        level, char = "No Level", "No Bullet"
        if props is not None:
            level = props.get("lvl")
            node = props.find("a:buChar", NS)
            char = node.get("char") if node is not None else "No Bullet"
        text = "".join(t.text for t in paragraph.iter(f"{{{NS['a']}}}t"))
        if text.strip():
            bullets.append(("0" if level is None else level, char, text))
    return bullets


def same_bullets(b1: list[tuple], b2: list[tuple]) -> bool:
    if len(b1) != len(b2):
        return False
    for (lvl1, char1, text1), (lvl2, char2, text2) in zip(b1, b2, strict=True):
        if text1 != text2 or char1 != char2:
            return False
        if (char1 != "No Bullet" or char2 != "No Bullet") and lvl1 != lvl2:
            return False
    return True


def compare_table_runs(shape1, shape2, ex: Examine) -> None:
    table1, table2 = shape1.table, shape2.table
    fail_if(
        (len(table1.rows), len(table1.columns)) != (len(table2.rows), len(table2.columns)),
        "table sizes differ",
    )
    for row in range(len(table1.rows)):
        for col in range(len(table1.columns)):
            paras1 = table1.cell(row, col).text_frame.paragraphs
            paras2 = table2.cell(row, col).text_frame.paragraphs
            fail_if(len(paras1) != len(paras2), "table cell paragraph counts differ")
            for p1, p2 in zip(paras1, paras2, strict=True):
                runs1, runs2 = visible_runs(p1, p2)
                fail_if(len(runs1) != len(runs2) and ex.run_count, "table run counts differ")
                for r1, r2 in zip(runs1, runs2, strict=False):
                    f1, f2 = r1.font, r2.font
                    if hasattr(f1.color, "rgb") and hasattr(f2.color, "rgb"):
                        fail_if(
                            f1.color.rgb != f2.color.rgb and ex.color_rgb, "cell colours differ"
                        )
                    fail_if(not unset_or_false(f1.bold, f2.bold) and f1.bold != f2.bold, "bold")
                    fail_if(
                        not unset_or_false(f1.italic, f2.italic) and f1.italic != f2.italic,
                        "italic",
                    )
                    fail_if(underline_differs(f1.underline, f2.underline), "cell underline differs")


def compare_runs(r1, r2, ex: Examine) -> None:
    f1, f2 = r1.font, r2.font
    fail_if(f1.name != f2.name and ex.font_name, "font names differ")
    fail_if(f1.size != f2.size and ex.font_size, "font sizes differ")
    fail_if(
        f1.bold != f2.bold and ex.font_bold and not unset_or_false(f1.bold, f2.bold), "bold differs"
    )
    fail_if(
        f1.italic != f2.italic and ex.font_italic and not unset_or_false(f1.italic, f2.italic),
        "italic differs",
    )
    if hasattr(f1.color, "rgb") and hasattr(f2.color, "rgb"):
        fail_if(f1.color.rgb != f2.color.rgb and ex.color_rgb, "colours differ")
    fail_if(
        ex.font_underline and underline_differs(f1.underline, f2.underline), "underline differs"
    )
    strike1 = f1._element.attrib.get("strike", "noStrike")
    strike2 = f2._element.attrib.get("strike", "noStrike")
    fail_if(strike1 != strike2 and ex.strike_through, "strike-through differs")
    if ex.bullets:
        try:
            same = same_bullets(slide_bullets(r1.part.blob), slide_bullets(r2.part.blob))
        except Exception:  # noqa: BLE001 -- OSWorld skips the bullet check when it cannot read them
            return
        fail_if(not same, "bullets differ")


def compare_text_frames(shape1, shape2, ex: Examine) -> None:
    fail_if(shape1.text.strip() != shape2.text.strip() and ex.text, "texts differ")
    paras1, paras2 = shape1.text_frame.paragraphs, shape2.text_frame.paragraphs
    fail_if(len(paras1) != len(paras2), "paragraph counts differ")
    for p1, p2 in zip(paras1, paras2, strict=True):
        fail_if(ex.alignment and alignment(p1) != alignment(p2), "alignments differ")
        fail_if(p1.text != p2.text and ex.text, "paragraph texts differ")
        if p1.level != p2.level and ex.indent:
            fail_if(not ({p1.level or 0, p2.level or 0} <= {0, 1}), "outline levels differ")
        runs1, runs2 = visible_runs(p1, p2)
        fail_if(len(runs1) != len(runs2) and ex.run_count, "run counts differ")
        for r1, r2 in zip(runs1, runs2, strict=False):
            compare_runs(r1, r2, ex)


def compare_positions(s1, s2, slide_no: int, ex: Examine, tol: float) -> None:
    """The task-specific position options (OSWorld hard-codes their slides, texts and bounds)."""
    has_text = hasattr(s1, "text") and hasattr(s2, "text")
    if ex.title_bottom_position:
        if has_text and s1.text == s2.text:
            fail_if(
                s1.text == "Product Comparison" and (s1.top <= s2.top or s1.top < 3600000), "title"
            )
        else:
            fail_if(not same_box(s1, s2, tol), "title_bottom_position: boxes differ")
    if ex.table_bottom_position:
        if slide_no == 3 and s1.shape_type == 19 and s2.shape_type == 19:
            fail_if(s1.top <= s2.top or s1.top < 3600000, "table not lowered")
        else:
            fail_if(not same_box(s1, s2, tol), "table_bottom_position: boxes differ")
    if ex.right_position and slide_no == 2 and not hasattr(s1, "text") and not hasattr(s2, "text"):
        fail_if(s1.left <= s2.left or s1.left < 4320000, "shape not moved right")
    if ex.top_position and slide_no == 2 and s1.shape_type == 13 and s2.shape_type == 13:
        fail_if(s1.top >= s2.top or s1.top > 1980000, "picture not moved up")
    if ex.shape_for_shift_size and not same_box(s1, s2, tol):
        kept = has_text and s1.text == s2.text == "Elaborate on what you want to discuss."
        fail_if(not kept, "shapes moved or resized")


def compare_sizes(s1, s2, ex: Examine, tol: float) -> None:
    both_blank = (
        not (getattr(s1, "text", None) or "").strip()
        and not (getattr(s2, "text", None) or "").strip()
    )
    fail_if(ex.shape and not both_blank and not same_box(s1, s2, tol), "shape geometry differs")
    if ex.image_size:
        if s1.shape_type == 13 and s2.shape_type == 13:
            fail_if(
                not (near(s1.width, s2.width, tol) and near(s1.height, s2.height, tol)),
                "image size",
            )
        else:
            fail_if(not same_box(s1, s2, tol), "image_size: boxes differ")
    if ex.modify_height:
        textless = not hasattr(s1, "text") and not hasattr(s2, "text")
        if textless or (s1.shape_type == 5 and s2.shape_type == 5):
            fail_if(not near(s1.height, s2.height, tol), "heights differ")
        else:
            fail_if(not same_box(s1, s2, tol), "modify_height: boxes differ")


def compare_slides(slide1, slide2, slide_no: int, ex: Examine, tol: float) -> None:
    fail_if(ex.background_color and background_rgb(slide1) != background_rgb(slide2), "backgrounds")
    notes1 = slide1.notes_slide.notes_text_frame.text.strip()
    notes2 = slide2.notes_slide.notes_text_frame.text.strip()
    fail_if(ex.note and notes1 != notes2, "notes differ")
    texts1, texts2 = text_shapes(slide1.shapes), text_shapes(slide2.shapes)
    fail_if(len(slide1.shapes) != len(slide2.shapes), "shape counts differ")
    for s1, s2 in zip(slide1.shapes, slide2.shapes, strict=True):
        compare_positions(s1, s2, slide_no, ex, tol)
        compare_sizes(s1, s2, ex, tol)
        if s1.shape_type == MSO_SHAPE_TYPE.TABLE:
            compare_table_runs(s1, s2, ex)
        if hasattr(s1, "text") and hasattr(s2, "text"):
            compare_text_frames(s1, s2, ex)
    fail_if(len(texts1) != len(texts2), "text shape counts differ (groups included)")
    if ex.alignment:
        for t1, t2 in zip(texts1, texts2, strict=True):
            fail_if(t1.text.strip() != t2.text.strip() and ex.text, "grouped texts differ")
            paras1, paras2 = t1.text_frame.paragraphs, t2.text_frame.paragraphs
            fail_if(len(paras1) != len(paras2), "grouped paragraph counts differ")
            for p1, p2 in zip(paras1, paras2, strict=True):
                fail_if(alignment(p1) != alignment(p2), "grouped alignments differ")


EXAMINE_OPTIONS = {f"examine_{f.name}" for f in fields(Examine)}


@file_metric("compare_pptx_files", files=2)
def compare_pptx_files(
    file1: str, file2: str, approximately_tolerance: float = 0.005, **options
) -> float:
    """1 when the decks agree in every examined aspect, else 0 (see the module docstring)."""
    ex = Examine(**{k[8:]: bool(v) for k, v in options.items() if k in EXAMINE_OPTIONS})
    deck1, deck2 = open_pptx(file1), open_pptx(file2)
    try:
        fail_if(
            ex.number_of_slides and len(deck1.slides) != len(deck2.slides), "slide counts differ"
        )
        for number, (slide1, slide2) in enumerate(zip(deck1.slides, deck2.slides, strict=False), 1):
            compare_slides(slide1, slide2, number, ex, approximately_tolerance)
    except Mismatch as mismatch:
        logger.info("compare_pptx_files scores 0: %s", mismatch)
        return 0.0
    return 1.0
