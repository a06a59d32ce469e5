"""PDF metrics over PDFs written on the fly (text pages by a tiny writer below, image pages by
Pillow)."""

from __future__ import annotations

import pytest
from PIL import Image
from rapidfuzz import fuzz

from harness.kernel.core import StateActError
from tasks.metrics.registry import get_metric


def write_pdf(path, pages: list[str]) -> str:
    """A minimal valid PDF: one Helvetica text line per page, with a correct cross-reference
    table."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for text in pages:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    body, offsets = b"%PDF-1.4\n", []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n{obj}\nendobj\n".encode("latin-1")
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    body += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    path.write_bytes(body)
    return str(path)


PAGES = ["Invoice 243729 total due 120.00 EUR", "Thank you for your business"]


def score(name, *args, **options) -> float:
    return get_metric(name)(*args, **options)


def test_identical_pdfs_match(tmp_path):
    gold = write_pdf(tmp_path / "g.pdf", PAGES)
    assert score("compare_pdfs", write_pdf(tmp_path / "r.pdf", PAGES), gold) == 1.0


def test_text_differences_give_the_ratio_of_the_joined_text(tmp_path):
    # OSWorld compares the text of all pages joined, each line ending in a newline.
    gold = write_pdf(tmp_path / "g.pdf", PAGES)
    changed = ["Invoice 243729 total due 150.00 EUR", PAGES[1]]
    expected = fuzz.ratio("\n".join(changed), "\n".join(PAGES)) / 100
    value = score("compare_pdfs", write_pdf(tmp_path / "r.pdf", changed), gold)
    assert 0.5 < value < 1.0 and value == pytest.approx(expected)


def test_missing_pages_lower_the_joined_ratio(tmp_path):
    gold = write_pdf(tmp_path / "g.pdf", PAGES)
    assert score("compare_pdfs", write_pdf(tmp_path / "r.pdf", PAGES[:1]), gold) == pytest.approx(
        fuzz.ratio(PAGES[0], "\n".join(PAGES)) / 100
    )


def test_lists_of_files_are_averaged(tmp_path):
    golds = [write_pdf(tmp_path / "g1.pdf", PAGES), write_pdf(tmp_path / "g2.pdf", ["Alex Lee"])]
    results = [
        write_pdf(tmp_path / "r1.pdf", PAGES),
        write_pdf(tmp_path / "r2.pdf", ["Somebody else entirely"]),
    ]
    value = score("compare_pdfs", results, golds)
    assert 0.5 <= value < 0.75
    # A list against one gold file: OSWorld pairs the first result with it (the list's first item).
    assert score("compare_pdfs", results, golds[0]) == 0.0


def test_missing_and_corrupt_pdfs_score_zero(tmp_path):
    gold = write_pdf(tmp_path / "g.pdf", PAGES)
    corrupt = tmp_path / "broken.pdf"
    corrupt.write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    assert score("compare_pdfs", None, gold) == 0.0
    assert score("compare_pdfs", [None], [gold]) == 0.0
    assert score("compare_pdfs", str(tmp_path / "absent.pdf"), gold) == 0.0
    assert score("compare_pdfs", str(corrupt), gold) == 0.0
    assert score("check_pdf_pages", str(corrupt), {"relation": "eq", "ref_value": 1}) == 0.0


def test_page_count_relations(tmp_path):
    two = write_pdf(tmp_path / "two.pdf", PAGES)
    assert score("check_pdf_pages", two, {"relation": "eq", "ref_value": 2}) == 1.0
    assert score("check_pdf_pages", two, {"relation": "eq", "ref_value": 1}) == 0.0
    assert score("check_pdf_pages", two, {"relation": "le", "ref_value": 3}) == 1.0
    with pytest.raises(StateActError, match="relation"):
        score("check_pdf_pages", two, {"relation": "about", "ref_value": 2})


def image_pdf(path, color, stripe=(0, 0, 0)) -> str:
    """A gradient picture (pHash needs some structure) tinted by `color`, with a stripe at the
    left."""
    image = Image.new("RGB", (40, 30))
    image.putdata(
        [tuple((c + 4 * x + 3 * y) % 256 for c in color) for y in range(30) for x in range(40)]
    )
    image.paste(stripe, (0, 0, 12, 30))
    image.save(path, "PDF")
    return str(path)


def test_pdf_images(tmp_path):
    gold = image_pdf(tmp_path / "g.pdf", (200, 180, 160))
    assert (
        score("compare_pdf_images", image_pdf(tmp_path / "same.pdf", (200, 180, 160)), gold) == 1.0
    )
    assert (
        score("compare_pdf_images", image_pdf(tmp_path / "near.pdf", (201, 179, 160)), gold) == 1.0
    )
    # OSWorld compares perceptual hashes: the layout of the picture counts, not its colours.
    flipped = image_pdf(tmp_path / "other.pdf", (0, 0, 0), stripe=(200, 180, 160))
    assert score("compare_pdf_images", flipped, gold) == 0.0
    assert score("compare_pdf_images", write_pdf(tmp_path / "text.pdf", PAGES), gold) == 0.0
