"""Reading an image file as a PNG scaled to fit a vision model's limits (read-only)."""

from __future__ import annotations

import base64
import io
import math
import os

from .errors import ToolError


def scale_factor(width: int, height: int, max_long_edge: int, max_pixels: int) -> float:
    """The factor that fits both the long-edge and the pixel-count limits, never enlarging."""
    return min(1.0, max_long_edge / max(width, height), math.sqrt(max_pixels / (width * height)))


def view_image(path: str, max_long_edge: int = 1568, max_pixels: int = 1_150_000) -> dict:
    if not os.path.isabs(path):
        raise ToolError(f"The path {path} is not an absolute path; it should start with `/`.")
    if not os.path.isfile(path):
        raise ToolError(
            f"The file {path} does not exist."
            if not os.path.exists(path)
            else f"{path} is not a file."
        )
    # Imported here: Pillow costs the toolbox's start 13 ms, and most sandboxes never view images.
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with Image.open(path) as opened:
            image = ImageOps.exif_transpose(opened)
            image.load()
    except (UnidentifiedImageError, Image.DecompressionBombError, SyntaxError, ValueError) as exc:
        raise ToolError(f"{path} is not an image Pillow can read ({exc}).") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read the image {path}: {exc}.") from exc
    width, height = image.size
    factor = scale_factor(width, height, max_long_edge, max_pixels)
    if factor < 1.0:
        size = (max(1, int(width * factor)), max(1, int(height * factor)))
        image = image.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert(
            "RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB"
        )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=3)
    return {
        "png_b64": base64.b64encode(buffer.getvalue()).decode("ascii"),
        "width": image.width,
        "height": image.height,
        "original_width": width,
        "original_height": height,
    }
