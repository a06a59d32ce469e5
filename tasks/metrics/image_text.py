"""Metrics that read text or marks off images: OSWorld's compare_image_text (OCR) and
check_textbox_on_leftside (gimp.py).

OSWorld runs EasyOCR, whose model weights would have to be downloaded at run time; StateAct runs
Tesseract (Debian's `tesseract-ocr`, installed by `make setup`/.ci) on the same image. Both find the
plain terminal and document text these tasks save; docs/osworld-fidelity.md notes the difference.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from harness.kernel.core import StateActError
from tasks.metrics.documents import UnreadableFile, file_metric

OCR_TIMEOUT_S = 120
XWD_HEADER = struct.Struct(">25I")


def read_xwd(path: str) -> Image.Image:
    """An X11 window dump (`xwd` output, ZPixmap, 24 or 32 bits per pixel) as an RGB image."""
    data = Path(path).read_bytes()
    if len(data) < XWD_HEADER.size:
        raise UnreadableFile(f"{path} is neither an image nor an X11 window dump")
    fields = XWD_HEADER.unpack_from(data)
    header_size, version, pixmap_format, _depth, width, height = fields[:6]
    byte_order, bits_per_pixel, bytes_per_line, ncolors = (
        fields[7],
        fields[11],
        fields[12],
        fields[19],
    )
    if version != 7 or pixmap_format != 2 or bits_per_pixel not in (24, 32):
        raise UnreadableFile(f"{path} is not an X11 window dump StateAct can read")
    start = header_size + 12 * ncolors  # the colour map follows the header
    raw = data[start : start + bytes_per_line * height]
    mode = "BGRX" if bits_per_pixel == 32 else "BGR"
    if byte_order == 1:  # MSB first
        mode = "XRGB" if bits_per_pixel == 32 else "RGB"
    try:
        return Image.frombuffer("RGB", (width, height), raw, "raw", mode, bytes_per_line, 1)
    except ValueError as exc:
        raise UnreadableFile(f"{path} is a truncated X11 window dump ({exc})") from None


def open_picture(path: str) -> Image.Image:
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError):
        return read_xwd(path)


def ocr_text(image: Image.Image) -> str:
    """The words Tesseract reads, each line's text joined with single spaces (as EasyOCR's
    boxes)."""
    tesseract = shutil.which("tesseract")
    if tesseract is None:
        raise StateActError(
            "compare_image_text needs Tesseract: install Debian's tesseract-ocr (make setup does)"
        )
    with tempfile.TemporaryDirectory(prefix="stateact-ocr-") as folder:
        picture = Path(folder) / "image.png"
        image.save(picture)
        done = subprocess.run(
            [tesseract, str(picture), "stdout"],
            capture_output=True,
            text=True,
            timeout=OCR_TIMEOUT_S,
        )
    if done.returncode != 0:
        raise UnreadableFile(f"Tesseract could not read the image: {done.stderr.strip()[:200]}")
    return " ".join(line.strip() for line in done.stdout.splitlines() if line.strip())


@file_metric("compare_image_text")
def compare_image_text(file: str, rule: dict) -> float:
    """The text `rule['text']` appears in the text read off the image (rule type `text`)."""
    if not Path(file).exists():
        return 0.0
    if rule.get("type") != "text":
        raise StateActError(f"compare_image_text has no rule type {rule.get('type')!r}; use text")
    return float(rule["text"] in ocr_text(open_picture(file)))


@file_metric("check_textbox_on_leftside")
def check_textbox_on_leftside(file: str) -> float:
    """The leftmost dark pixel (grey below 128) lies within the left 5% of the image."""
    try:
        with Image.open(file) as image:
            gray = image.convert("L")
    except (UnidentifiedImageError, OSError) as exc:
        raise UnreadableFile(f"{file} is not an image ({exc})") from None
    width, height = gray.size
    pixels = gray.load()
    leftmost = width
    for y in range(height):
        for x in range(min(width, leftmost)):
            if pixels[x, y] < 128:
                leftmost = x
                break
    return float(leftmost < width * 0.05)
