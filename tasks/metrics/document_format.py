"""Writer metrics about character and paragraph formatting (fonts, spacing, scripts, highlights,
colours).

Each follows OSWorld's function of the same name (desktop_env/evaluators/metrics/docs.py);
oddities kept for comparable scores are listed in docs/osworld-fidelity.md. Conventions as in
`tasks.metrics.documents`.
"""

from __future__ import annotations

import zipfile

import numpy as np
from docx.enum.text import WD_ALIGN_PARAGRAPH
from lxml import etree

from tasks.metrics.documents import (
    W_NS,
    UnreadableFile,
    file_metric,
    load,
    open_docx,
    texts_equal,
)


@file_metric("compare_font_names")
def compare_font_names(file: str, rules: dict) -> float:
    """Every run of the body's paragraphs (not tables) names `rules['font_name']` directly."""
    expected = rules["font_name"]
    runs = [run for p in open_docx(file).paragraphs for run in p.runs]
    return float(all(run.font.name == expected for run in runs))


@file_metric("compare_line_spacing", files=2)
def compare_line_spacing(file1: str, file2: str) -> float:
    """Same text, same number of paragraphs, and each paragraph's line spacing equals the gold's."""
    if not texts_equal(file1, file2):
        return 0.0
    result, gold = open_docx(file1).paragraphs, open_docx(file2).paragraphs
    if len(result) != len(gold):
        return 0.0
    return float(
        all(
            a.paragraph_format.line_spacing == b.paragraph_format.line_spacing
            for a, b in zip(result, gold, strict=True)
        )
    )


def paired_runs(file1: str, file2: str):
    """Runs of the two documents paired by paragraph and position (zip: the shorter side
    decides)."""
    for para1, para2 in zip(open_docx(file1).paragraphs, open_docx(file2).paragraphs, strict=False):
        yield from zip(para1.runs, para2.runs, strict=False)


@file_metric("compare_subscript_contains", files=2)
def compare_subscript_contains(file1: str, file2: str) -> float:
    """Some run is subscript in both documents at the same paragraph and run position."""
    return float(any(a.font.subscript and b.font.subscript for a, b in paired_runs(file1, file2)))


@file_metric("check_italic_font_size_14", files=2)
def check_italic_font_size_14(file1: str, file2: str) -> float:
    """Same text, and every italic run of the body's paragraphs is set in 14 pt."""
    if not texts_equal(file1, file2):
        return 0.0
    runs = [run for p in open_docx(file1).paragraphs for run in p.runs if run.italic]
    return float(all(run.font.size is not None and run.font.size.pt == 14 for run in runs))


@file_metric("evaluate_strike_through_last_paragraph", files=2)
def evaluate_strike_through_last_paragraph(file1: str, file2: str) -> float:
    """Same text, and every run of the last paragraph (empty or not) is struck through (single
    strike)."""
    if not texts_equal(file1, file2):
        return 0.0
    paragraphs = open_docx(file1).paragraphs
    if not paragraphs:
        raise UnreadableFile(f"{file1} has no paragraph")
    return float(all(run.font.strike for run in paragraphs[-1].runs))


@file_metric("is_first_line_centered")
def is_first_line_centered(file: str) -> float:
    """The first paragraph (even an empty one) is centred."""
    paragraphs = open_docx(file).paragraphs
    if not paragraphs:
        raise UnreadableFile(f"{file} has no paragraph")
    return float(paragraphs[0].paragraph_format.alignment == WD_ALIGN_PARAGRAPH.CENTER)


def highlighted_texts(path: str) -> set[str]:
    """The first w:t text of every run (anywhere in document.xml) with a highlight other than
    none."""
    w = f"{{{W_NS}}}"
    try:
        with zipfile.ZipFile(path) as archive:
            root = etree.fromstring(archive.read("word/document.xml"))
    except (OSError, KeyError, zipfile.BadZipFile, etree.LxmlError) as exc:
        raise UnreadableFile(f"{path} is not a readable .docx file ({exc})") from None
    found = set()
    for run in root.iter(f"{w}r"):
        highlight = run.find(f".//{w}highlight")
        if highlight is not None and highlight.get(f"{w}val") != "none":
            text = run.find(f".//{w}t")
            if text is not None:
                found.add(text.text)
    return found


@file_metric("compare_highlighted_text", files=2)
def compare_highlighted_text(file1: str, file2: str) -> float:
    """The same set of highlighted run texts in both documents."""
    return float(highlighted_texts(file1) == highlighted_texts(file2))


@file_metric("check_highlighted_words", files=2)
def check_highlighted_words(file1: str, file2: str) -> float:
    """Same text (.odt), and no span uses an automatic style whose background is exactly #ffff00."""
    from odf import opendocument
    from odf.text import Span

    if not texts_equal(file1, file2):
        return 0.0
    document = load(file1, opendocument.load, ".odt")
    styles = document.automaticstyles.childNodes
    for span in document.getElementsByType(Span):
        name = span.getAttribute("stylename")
        if not name:
            continue
        for style in styles:
            if style.getAttribute("name") != name:
                continue
            if any(prop.getAttribute("backgroundcolor") == "#ffff00" for prop in style.childNodes):
                return 0.0
    return 1.0


# --- colour difference (CIEDE2000 on CIELAB, D65), as scikit-image computes it
# ----------------------------

D65 = np.array([0.95047, 1.0, 1.08883])
SRGB_TO_XYZ = np.array(
    [[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]]
)


def rgb_to_lab(rgb) -> np.ndarray:
    """CIELAB of an 8-bit sRGB colour."""
    c = np.array([rgb[0], rgb[1], rgb[2]], dtype=float) / 255
    linear = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = SRGB_TO_XYZ @ linear / D65
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e_2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """The CIEDE2000 colour difference (kL = kC = kH = 1)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)))
    a1, a2 = a1 * (1 + g), a2 * (1 + g)
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.arctan2(b1, a1) % (2 * np.pi), np.arctan2(b2, a2) % (2 * np.pi)
    dl, dc = l2 - l1, c2 - c1
    dh = h2 - h1
    if c1 * c2 == 0:
        dh = 0.0
    elif dh > np.pi:
        dh -= 2 * np.pi
    elif dh < -np.pi:
        dh += 2 * np.pi
    dh_term = 2 * np.sqrt(c1 * c2) * np.sin(dh / 2)
    l_mean, c_mean2 = (l1 + l2) / 2, (c1 + c2) / 2
    h_mean = h1 + h2
    if c1 * c2 != 0:
        if abs(h1 - h2) > np.pi:
            h_mean += 2 * np.pi if h_mean < 2 * np.pi else -2 * np.pi
        h_mean /= 2
    t = (
        1
        - 0.17 * np.cos(h_mean - np.radians(30))
        + 0.24 * np.cos(2 * h_mean)
        + 0.32 * np.cos(3 * h_mean + np.radians(6))
        - 0.20 * np.cos(4 * h_mean - np.radians(63))
    )
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * c_mean2
    s_h = 1 + 0.015 * c_mean2 * t
    r_c = 2 * np.sqrt(c_mean2**7 / (c_mean2**7 + 25.0**7))
    d_theta = np.radians(30) * np.exp(-(((np.degrees(h_mean) - 275) / 25) ** 2))
    r_t = -np.sin(2 * d_theta) * r_c
    terms = (dl / s_l, dc / s_c, dh_term / s_h)
    return float(np.sqrt(terms[0] ** 2 + terms[1] ** 2 + terms[2] ** 2 + r_t * terms[1] * terms[2]))


@file_metric("evaluate_colored_words_in_tables", files=2)
def evaluate_colored_words_in_tables(
    file1: str, file2: str, threshold: float = 3.5, **_ignored
) -> float:
    """Same text, and in the tables every run starting with a vowel is red, every other run blue
    (within CIEDE2000 `threshold`); a run without an explicit colour fails."""
    if not texts_equal(file1, file2):
        return 0.0
    red, blue = rgb_to_lab((255, 0, 0)), rgb_to_lab((0, 0, 255))
    for table in open_docx(file1).tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        if not run.text:
                            continue
                        color = run.font.color.rgb
                        if color is None:
                            return 0.0
                        wanted = red if run.text[0].lower() in "aeiou" else blue
                        if delta_e_2000(rgb_to_lab(color), wanted) > threshold:
                            return 0.0
    return 1.0
