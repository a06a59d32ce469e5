"""Impress metrics: the smaller checks over .pptx files, each following OSWorld's function of the
same name (desktop_env/evaluators/metrics/slides.py); `compare_pptx_files` lives in
`slides_compare`.

Conventions as in `tasks.metrics.documents`: paths (or None) first, then the task's options; a
missing or unreadable file scores 0.0 with a logged reason. Oddities kept for comparable scores
are listed in docs/osworld-fidelity.md.
"""

from __future__ import annotations

import math
import zipfile

import pptx
from lxml import etree
from pptx.exc import PythonPptxError
from pptx.util import Inches

from tasks.metrics.documents import UnreadableFile, file_metric, load
from tasks.metrics.registry import metric

A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
NS = {"a": A_NS, "p": P_NS}
PICTURE = 13


def open_pptx(path: str):
    try:
        return load(path, pptx.Presentation, ".pptx")
    except PythonPptxError as exc:  # python-pptx's own "package not found"
        raise UnreadableFile(f"{path} is not a readable .pptx file ({exc})") from None


def zip_xml(path: str, member: str) -> etree._Element | None:
    """A member of a zip package parsed as XML; None when the package has no such member."""
    try:
        with zipfile.ZipFile(path) as archive:
            if member not in archive.namelist():
                return None
            return etree.fromstring(archive.read(member))
    except (OSError, zipfile.BadZipFile, etree.LxmlError) as exc:
        raise UnreadableFile(f"{path} is not a readable .pptx file ({exc})") from None


@file_metric("check_transition")
def check_transition(file: str, rules: dict) -> float:
    """The first p:transition of slide`slide_idx + 1`.xml (by file name) holds a `transition_type`
    element."""
    root = zip_xml(file, f"ppt/slides/slide{rules['slide_idx'] + 1}.xml")
    transition = root.find(".//p:transition", NS) if root is not None else None
    if transition is None:
        return 0.0
    return float(transition.find(f".//p:{rules['transition_type']}", NS) is not None)


def master_number_color(file: str) -> str | None:
    """The srgb colour OSWorld reads as the slide number's, from slideMaster1.xml: the sldNum
    placeholder, else a footer/date placeholder, else the last non-black run colour, else any
    colour."""
    root = zip_xml(file, "ppt/slideMasters/slideMaster1.xml")
    if root is None:
        raise UnreadableFile(f"{file} has no ppt/slideMasters/slideMaster1.xml")
    fill = ".//a:solidFill//a:srgbClr"
    number = root.find('.//p:ph[@type="sldNum"]', NS)
    if number is not None and number.find(fill, NS) is not None:
        return number.find(fill, NS).get("val")
    for ph in root.findall(".//p:ph", NS):
        if ph.get("type") in ("sldNum", "ftr", "dt") and ph.find(fill, NS) is not None:
            return ph.find(fill, NS).get("val")
    for node in reversed(root.findall(".//a:rPr//a:solidFill//a:srgbClr", NS)):
        if node.get("val") and node.get("val") != "000000":
            return node.get("val")
    colors = root.findall(fill, NS)
    for node in reversed(colors):
        if node.get("val") and node.get("val") != "000000":
            return node.get("val")
    return colors[-1].get("val") if colors else None


COLOR_TESTS = {
    "red": lambda r, g, b: r > g + 50 and r > b + 50,
    "blue": lambda r, g, b: b > g + 50 and b > r + 50,
    "green": lambda r, g, b: g > r + 50 and g > b + 50,
    "black": lambda r, g, b: r < 50 and g < 50 and b < 50,
}


@file_metric("check_page_number_colors")
def check_page_number_colors(file: str, rules: dict) -> float:
    """The master's slide-number colour (see `master_number_color`) reads as `rules['color']`."""
    value = master_number_color(file)
    if value is None:
        return 0.0
    value = value.lstrip("#")
    try:
        rgb = tuple(int(value[i : i + 2], 16) for i in (0, 2, 4)) if len(value) == 6 else None
    except ValueError:
        rgb = None
    if rgb is None:
        return 0.0
    test = COLOR_TESTS.get(rules["color"])
    return float(test is None or test(*rgb))


@file_metric("check_slide_orientation_Portrait")
def check_slide_orientation_portrait(file: str) -> float:
    """The slides are narrower than tall."""
    deck = open_pptx(file)
    return float(deck.slide_width < deck.slide_height)


def fill_distance(slide, target, original) -> float:
    """Distance of a slide's solid background colour (its own, or the master's when it follows the
    master) to `target`, as a share of black-to-white; 1 when it has none or still is `original`."""
    fill = slide.background.fill
    if fill.type == 5:
        fill = slide.slide_layout.slide_master.background.fill
    elif fill.type != 1:
        return 1.0
    if fill.type != 1:
        return 1.0
    try:
        rgb = fill.fore_color.rgb if hasattr(fill.fore_color, "rgb") else None
    except Exception:  # noqa: BLE001 -- OSWorld treats an unreadable colour as none
        rgb = None
    if rgb is None:
        return 1.0
    if original is not None and list(rgb) == list(original):
        return 1.0
    return math.dist(rgb, target) / math.sqrt(3 * 255**2)


@file_metric("evaluate_presentation_fill_to_rgb_distance")
def evaluate_presentation_fill_to_rgb_distance(file: str, rules: dict) -> float:
    """1 minus the mean distance of the slides' background colours to `rules['rgb']`."""
    slides = open_pptx(file).slides
    original = rules.get("original_rgb")
    distances = [fill_distance(slide, rules["rgb"], original) for slide in slides]
    if not distances:
        raise UnreadableFile(f"{file} has no slides")
    return 1 - sum(distances) / len(distances)


@file_metric("check_image_stretch_and_center", files=2)
def check_image_stretch_and_center(modified: str, original: str) -> float:
    """The first picture of the original's first slide is, on the result's first slide, stretched to
    the slide size and centred (each within half an inch)."""
    before, after = open_pptx(original), open_pptx(modified)
    pictures = [s for s in before.slides[0].shapes if s.shape_type == PICTURE]
    if not pictures:
        return 0.0
    blob = pictures[0].image.blob
    matches = [
        s for s in after.slides[0].shapes if s.shape_type == PICTURE and s.image.blob == blob
    ]
    if not matches:
        return 0.0
    image, width, height = matches[-1], before.slide_width, before.slide_height
    half = Inches(0.5)
    return float(
        abs(image.width - width) <= half
        and abs(image.height - height) <= half
        and abs(image.left - (width - image.width) / 2) <= half
        and abs(image.top - (height - image.height) / 2) <= half
    )


@metric("check_left_panel")
def check_left_panel(accessibility_tree: str) -> float:
    """The accessibility tree (XML) has a document-frame named "Slides View": the slide pane is
    open."""
    root = etree.fromstring(accessibility_tree.encode())
    return float(any(frame.get("name") == "Slides View" for frame in root.iter("document-frame")))


# Registered here so importing this module is enough to get every Impress metric.
