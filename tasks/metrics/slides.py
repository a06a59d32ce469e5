"""Impress metrics: OSWorld's `compare_pptx_files` and the smaller checks over .pptx files.

Conventions as in `tasks.metrics.documents`: paths (or None) first, then the task's options; a missing or
unreadable file scores 0.0 with a logged reason; an unknown `compare_pptx_files` option raises StateActError.

`compare_pptx_files` walks both decks in parallel — slides in order, shapes in z-order (groups and table
cells included), paragraphs and runs — and scores 0.0 at the first examined difference, else 1.0.
Shape counts per slide are always compared, since every other comparison pairs shapes by position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import pptx
from lxml import etree
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PythonPptxError
from pptx.util import Length

from harness.kernel.core import StateActError
from tasks.metrics.documents import UnreadableFile, color_matches, file_metric, load, logger

A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
NS = {"a": A_NS, "p": P_NS}
TITLE_TYPES = (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE)


@dataclass(frozen=True)
class PptxComparison:
    """Which aspects `compare_pptx_files` examines (OSWorld's option names, without the `examine_` prefix)."""

    number_of_slides: bool = True
    """Both decks have the same number of slides."""
    shape: bool = True
    """Every shape has the same position and size (exactly, in EMU)."""
    shape_lenient_height: bool = False
    """With `shape`, heights may differ (text boxes that grew or shrank with their text)."""
    text: bool = True
    """Every shape's text is the same."""
    indent: bool = True
    """Paragraph outline levels and indents are the same."""
    font_name: bool = True
    """Run font names are the same."""
    font_size: bool = True
    """Run font sizes are the same."""
    font_bold: bool = True
    """Run bold flags are the same."""
    font_italic: bool = True
    """Run italic flags are the same."""
    color_rgb: bool = True
    """Run colours (RGB or theme colour) are the same."""
    font_underline: bool = True
    """Run underline styles are the same."""
    strike_through: bool = True
    """Run strike-through styles are the same."""
    alignment: bool = True
    """Paragraph alignments are the same."""
    run_count: bool = True
    """Paragraphs have the same number of runs."""
    bullets: bool = True
    """Paragraph bullets (character, numbering, colour) are the same."""
    background_color: bool = True
    """Slide backgrounds (own, else the layout's or master's) are the same."""
    note: bool = True
    """Speaker notes have the same text."""
    title_bottom_position: bool = False
    """Title placeholders end at the gold's height (within tolerance), even when `shape` is off."""
    table_bottom_position: bool = False
    """Tables end at the gold's height (within tolerance), even when `shape` is off."""
    right_position: bool = False
    """Pictures end at the gold's right edge (within tolerance), even when `shape` is off."""
    top_position: bool = False
    """Pictures start at the gold's top (within tolerance), even when `shape` is off."""
    image_size: bool = False
    """Pictures have the gold's width and height (within tolerance of the gold's size)."""
    modify_height: bool = False
    """Pictures have the gold's height (within tolerance of the gold's height)."""
    approximately_tolerance: float = 0.005
    """Relative tolerance of the position and size checks: a fraction of the slide side or gold size."""

    @classmethod
    def from_options(cls, options: dict) -> PptxComparison:
        """Build from task options (comment keys starting with `_` are already dropped)."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {}
        for key, value in options.items():
            name = key.removeprefix("examine_")
            if name not in known:
                raise StateActError(f"compare_pptx_files has no option {key!r}")
            values[name] = value
        return cls(**values)


def open_pptx(path: str):
    try:
        return load(path, pptx.Presentation, ".pptx")
    except PythonPptxError as exc:  # python-pptx's own "package not found"
        raise UnreadableFile(f"{path} is not a readable .pptx file ({exc})") from None


def flat_shapes(shapes) -> Iterator:
    """Shapes in z-order with group members in place of their group."""
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from flat_shapes(shape.shapes)
        else:
            yield shape


def text_frames(shape) -> list:
    """The text frames a shape holds: its own, or each table cell's."""
    if shape.has_text_frame:
        return [shape.text_frame]
    if getattr(shape, "has_table", False):
        return [cell.text_frame for row in shape.table.rows for cell in row.cells]
    return []


def background(slide) -> bytes | None:
    """Canonical XML of the background the slide shows: its own, else its layout's, else its master's."""
    for part in (slide, slide.slide_layout, slide.slide_layout.slide_master):
        bg = part._element.find("p:cSld/p:bg", NS)
        if bg is not None:
            return etree.tostring(bg, method="c14n")
    return None


def bullet(paragraph) -> tuple:
    """What marks a paragraph: bullet character or numbering scheme, and the bullet colour."""
    ppr = paragraph._p.pPr
    if ppr is None:
        return ()
    marks = []
    for tag in ("buNone", "buChar", "buAutoNum", "buClr", "buSzPct", "buFont"):
        node = ppr.find(f"a:{tag}", NS)
        if node is not None:
            marks.append(
                (tag, tuple(sorted(node.attrib.items())), etree.tostring(node, method="c14n"))
            )
    return tuple(marks)


def indent(paragraph) -> tuple:
    ppr = paragraph._p.pPr
    attrs = (ppr.get("marL"), ppr.get("indent")) if ppr is not None else (None, None)
    return (paragraph.level, *attrs)


def color(run) -> tuple:
    font_color = run.font.color
    if font_color.type is None:
        return (None,)
    try:
        return (font_color.type, str(font_color.rgb))
    except AttributeError:  # a theme colour has no RGB of its own
        return (font_color.type, font_color.theme_color)


def strike(run) -> str:
    rpr = run._r.rPr
    value = rpr.get("strike") if rpr is not None else None
    return value or "noStrike"


RUN_ASPECTS = {
    "font_name": lambda r: r.font.name,
    "font_size": lambda r: r.font.size,
    "font_bold": lambda r: r.font.bold,
    "font_italic": lambda r: r.font.italic,
    "color_rgb": color,
    "font_underline": lambda r: r.font.underline,
    "strike_through": strike,
}


def same_text_frames(mine, gold, check: PptxComparison) -> str | None:
    """The first examined difference between two text frames, or None."""
    if check.text and mine.text.strip() != gold.text.strip():
        return f"text {mine.text!r} != {gold.text!r}"
    for p1, p2 in zip(mine.paragraphs, gold.paragraphs, strict=False):
        if check.alignment and p1.alignment != p2.alignment:
            return f"alignment {p1.alignment} != {p2.alignment} in {p2.text!r}"
        if check.indent and indent(p1) != indent(p2):
            return f"indent {indent(p1)} != {indent(p2)} in {p2.text!r}"
        if check.bullets and bullet(p1) != bullet(p2):
            return f"bullets differ in {p2.text!r}"
        if check.run_count and len(p1.runs) != len(p2.runs):
            return f"{len(p1.runs)} runs != {len(p2.runs)} in {p2.text!r}"
        for r1, r2 in zip(p1.runs, p2.runs, strict=False):
            for aspect, read in RUN_ASPECTS.items():
                if getattr(check, aspect) and read(r1) != read(r2):
                    return f"{aspect} {read(r1)} != {read(r2)} in {r2.text!r}"
    return None


def near(value: Length | None, target: Length | None, scale: int, tolerance: float) -> bool:
    if value is None or target is None:
        return value == target
    return abs(value - target) <= tolerance * scale


def edge_difference(mine, gold, check: PptxComparison, width: int, height: int) -> str | None:
    """The first difference of the position and size checks that are examined without `shape`."""
    tol = check.approximately_tolerance
    bottom = (mine.top or 0) + (mine.height or 0), (gold.top or 0) + (gold.height or 0)
    is_title = (
        mine.is_placeholder and gold.is_placeholder and gold.placeholder_format.type in TITLE_TYPES
    )
    if check.title_bottom_position and is_title and not near(*bottom, height, tol):
        return f"title bottom {bottom[0]} != {bottom[1]}"
    if (
        check.table_bottom_position
        and getattr(gold, "has_table", False)
        and not near(*bottom, height, tol)
    ):
        return f"table bottom {bottom[0]} != {bottom[1]}"
    if gold.shape_type != MSO_SHAPE_TYPE.PICTURE:
        return None
    right = (mine.left or 0) + (mine.width or 0), (gold.left or 0) + (gold.width or 0)
    if check.right_position and not near(*right, width, tol):
        return f"picture right edge {right[0]} != {right[1]}"
    if check.top_position and not near(mine.top, gold.top, height, tol):
        return f"picture top {mine.top} != {gold.top}"
    if check.image_size and not near(mine.width, gold.width, gold.width or 0, tol):
        return f"picture width {mine.width} != {gold.width}"
    if (check.image_size or check.modify_height) and not near(
        mine.height, gold.height, gold.height or 0, tol
    ):
        return f"picture height {mine.height} != {gold.height}"
    return None


def shape_difference(mine, gold, check: PptxComparison, width: int, height: int) -> str | None:
    """The first examined difference between two paired shapes, or None."""
    if check.shape:
        box1 = (
            mine.left,
            mine.top,
            mine.width,
            None if check.shape_lenient_height else mine.height,
        )
        box2 = (
            gold.left,
            gold.top,
            gold.width,
            None if check.shape_lenient_height else gold.height,
        )
        if box1 != box2:
            return f"shape {gold.name!r} is at {box1}, gold at {box2}"
    problem = edge_difference(mine, gold, check, width, height)
    if problem:
        return problem
    frames1, frames2 = text_frames(mine), text_frames(gold)
    if check.text and len(frames1) != len(frames2):
        return f"shape {gold.name!r} holds text in one deck only"
    for f1, f2 in zip(frames1, frames2, strict=False):
        problem = same_text_frames(f1, f2, check)
        if problem:
            return problem
    return None


def notes(slide) -> str:
    if not slide.has_notes_slide or slide.notes_slide.notes_text_frame is None:
        return ""
    return slide.notes_slide.notes_text_frame.text.strip()


def deck_difference(result, gold, check: PptxComparison) -> str | None:
    """The first examined difference between two presentations, or None."""
    if check.number_of_slides and len(result.slides) != len(gold.slides):
        return f"{len(result.slides)} slides, gold has {len(gold.slides)}"
    width, height = gold.slide_width or 0, gold.slide_height or 0
    for number, (mine, theirs) in enumerate(zip(result.slides, gold.slides, strict=False), start=1):
        if check.background_color and background(mine) != background(theirs):
            return f"slide {number}: background differs"
        if check.note and notes(mine) != notes(theirs):
            return f"slide {number}: notes {notes(mine)!r} != {notes(theirs)!r}"
        shapes1, shapes2 = list(flat_shapes(mine.shapes)), list(flat_shapes(theirs.shapes))
        if len(shapes1) != len(shapes2):
            return f"slide {number}: {len(shapes1)} shapes, gold has {len(shapes2)}"
        for shape1, shape2 in zip(shapes1, shapes2, strict=False):
            problem = shape_difference(shape1, shape2, check, width, height)
            if problem:
                return f"slide {number}: {problem}"
    return None


@file_metric("compare_pptx_files", files=2)
def compare_pptx_files(file1: str, file2: str, **options) -> float:
    """1.0 when the result deck matches the gold in every examined aspect, else 0.0."""
    check = PptxComparison.from_options(options)
    problem = deck_difference(open_pptx(file1), open_pptx(file2), check)
    if problem:
        logger.info("compare_pptx_files scores 0: %s", problem)
    return float(problem is None)


@file_metric("check_transition")
def check_transition(file: str, rules: dict) -> float:
    """Slide `rules['slide_idx']` (0-based) has the transition `rules['transition_type']` (e.g. dissolve)."""
    slides = open_pptx(file).slides
    index = int(rules["slide_idx"])
    if index >= len(slides):
        return 0.0
    wanted = rules["transition_type"]
    # LibreOffice may wrap newer transitions in mc:AlternateContent, so look at every transition element.
    transitions = slides[index]._element.iter(f"{{{P_NS}}}transition", "{*}transition")
    return float(
        any(etree.QName(child).localname == wanted for t in transitions for child in t.iter())
    )


def slide_number_colors(deck) -> list[tuple | None]:
    """The colour of every slide-number field shown on the slides (its own, else its placeholder's on the
    layout or master)."""
    colors = []
    for slide in deck.slides:
        for field in slide._element.iter(f"{{{A_NS}}}fld"):
            if field.get("type") != "slidenum":
                continue
            colors.append(explicit_color(field) or inherited_number_color(slide))
    return colors


def explicit_color(element) -> str | None:
    node = element.find("a:rPr/a:solidFill/a:srgbClr", NS)
    return node.get("val") if node is not None else None


def inherited_number_color(slide) -> str | None:
    for part in (slide.slide_layout, slide.slide_layout.slide_master):
        for shape in part.placeholders:
            if shape.placeholder_format.type != PP_PLACEHOLDER.SLIDE_NUMBER:
                continue
            for node in shape._element.iter(f"{{{A_NS}}}fld", f"{{{A_NS}}}defRPr"):
                found = explicit_color(node) if node.tag.endswith("fld") else None
                fill = (
                    node.find("a:solidFill/a:srgbClr", NS) if node.tag.endswith("defRPr") else None
                )
                if found or fill is not None:
                    return found or fill.get("val")
    return None


@file_metric("check_page_number_colors")
def check_page_number_colors(file: str, rules: dict) -> float:
    """Every slide number shown is in the colour `rules['color']` (a plain colour name such as red)."""
    colors = slide_number_colors(open_pptx(file))
    return float(bool(colors) and all(color_matches(c, rules["color"]) for c in colors))


@file_metric("check_slide_orientation_Portrait")
def check_slide_orientation_portrait(file: str) -> float:
    """The slides are taller than wide."""
    deck = open_pptx(file)
    return float((deck.slide_height or 0) > (deck.slide_width or 0))


@file_metric("evaluate_presentation_fill_to_rgb_distance")
def evaluate_presentation_fill_to_rgb_distance(file: str, rules: dict) -> float:
    """Every slide's background is a solid colour nearer to `rules['rgb']` than to `rules['original_rgb']`."""
    deck = open_pptx(file)
    target, original = rules["rgb"], rules.get("original_rgb", [255, 255, 255])
    for slide in deck.slides:
        xml = background(slide)
        node = etree.fromstring(xml).find("p:bgPr/a:solidFill/a:srgbClr", NS) if xml else None
        if node is None:
            return 0.0
        value = node.get("val")
        rgb = [int(value[i : i + 2], 16) for i in (0, 2, 4)]
        if sum((a - b) ** 2 for a, b in zip(rgb, target, strict=False)) >= sum(
            (a - b) ** 2 for a, b in zip(rgb, original, strict=False)
        ):
            return 0.0
    return float(len(deck.slides) > 0)
