"""The changed region of a GUI step (LocalLSTC Appendix D.4): the pixel-wise difference of the
screenshots before and after an action, its bounding box grown by a 50-pixel margin on each side,
cropped from the after screenshot; with no changed pixel, the full screenshot. Step Abstraction
looks at this crop, so a small local model is shown what the action changed, not the whole
screen."""

from __future__ import annotations

import io

from PIL import Image, ImageChops

MARGIN = 50
"""The seed's Step Abstraction ROI margin, in pixels."""


def scaled(png: bytes, scale: float) -> bytes:
    """`png` downscaled by `scale` (1: unchanged), for the planner's and verifier's requests."""
    if scale >= 1:
        return png
    image = Image.open(io.BytesIO(png))
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return _png(image.resize(size))


def changed_region(
    before: bytes | None, after: bytes, margin: int = MARGIN
) -> tuple[bytes, tuple[int, int, int, int] | None]:
    """The after screenshot cropped to the changed box plus `margin` (and the box, left, top,
    right, bottom); the whole screenshot and None when nothing changed or there is no before."""
    if before is None:
        return after, None
    old, new = Image.open(io.BytesIO(before)).convert("RGB"), Image.open(io.BytesIO(after))
    new = new.convert("RGB")
    if old.size != new.size:
        return after, None
    box = ImageChops.difference(old, new).getbbox()
    if box is None:
        return after, None
    left, top, right, bottom = box
    grown = (
        max(0, left - margin),
        max(0, top - margin),
        min(new.width, right + margin),
        min(new.height, bottom + margin),
    )
    return _png(new.crop(grown)), grown


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
