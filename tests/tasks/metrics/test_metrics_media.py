"""Unit checks of the media metrics' own parts: the X11 dump reader, the pHash, missing tools."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from PIL import Image, ImageDraw

from harness.kernel.core import StateActError
from tasks.evaluate import run_metric_value
from tasks.metrics import image_text, video
from tasks.metrics.documents import UnreadableFile


def write_xwd(path, image: Image.Image, colours: int = 0) -> None:
    """A ZPixmap X11 window dump, 32 bits per pixel, LSB first, with `colours` colour map
    entries."""
    width, height = image.size
    name = b"shot\0"
    header = [100 + len(name), 7, 2, 24, width, height, 0, 0, 32, 0, 32, 32, width * 4, 4]
    header += [0xFF0000, 0xFF00, 0xFF, 8, 256, colours, width, height, 0, 0, 0]
    pixels = image.convert("RGBA").tobytes("raw", "BGRA")
    path.write_bytes(struct.pack(">25I", *header) + name + b"\0" * 12 * colours + pixels)


def sample_image() -> Image.Image:
    image = Image.new("RGB", (40, 20), (10, 200, 30))
    ImageDraw.Draw(image).rectangle([5, 5, 15, 15], fill=(250, 0, 90))
    return image


@pytest.mark.parametrize("colours", [0, 3])
def test_x11_dumps_read_pixel_for_pixel(tmp_path, colours):
    write_xwd(tmp_path / "shot.xwd", sample_image(), colours)
    assert image_text.open_picture(str(tmp_path / "shot.xwd")).tobytes() == sample_image().tobytes()


def test_broken_pictures_are_unreadable_not_crashes(tmp_path):
    (tmp_path / "short.xwd").write_bytes(b"\0" * 10)
    with pytest.raises(UnreadableFile):
        image_text.open_picture(str(tmp_path / "short.xwd"))
    write_xwd(tmp_path / "cut.xwd", sample_image())
    (tmp_path / "cut.xwd").write_bytes((tmp_path / "cut.xwd").read_bytes()[:200])
    with pytest.raises(UnreadableFile):
        image_text.open_picture(str(tmp_path / "cut.xwd"))
    rule = {"type": "text", "text": "ls"}
    assert run_metric_value("compare_image_text", str(tmp_path / "short.xwd"), rule, {}) == 0.0


def test_missing_tools_are_named(tmp_path, monkeypatch):
    sample_image().save(tmp_path / "a.png")
    monkeypatch.setattr(image_text.shutil, "which", lambda name: None)
    with pytest.raises(StateActError, match="tesseract-ocr"):
        image_text.compare_image_text(str(tmp_path / "a.png"), {"type": "text", "text": "x"})
    monkeypatch.setattr(video.shutil, "which", lambda name: None)
    with pytest.raises(StateActError, match="ffmpeg"):
        video.compare_videos(str(tmp_path / "a.png"), str(tmp_path / "a.png"))


def test_phash_is_64_bits_and_stable_under_scaling():
    image = sample_image()
    bits = video.phash(image)
    assert bits.shape == (64,) and bits.dtype == bool
    assert int(np.count_nonzero(bits != video.phash(image.resize((80, 40))))) <= 5
    assert int(np.count_nonzero(bits != video.phash(image.transpose(Image.FLIP_LEFT_RIGHT)))) > 5
