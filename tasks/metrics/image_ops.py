"""Image measurements shared by the image metrics: loading, SSIM, brightness, contrast, saturation.

SSIM here is the classic Wang et al. index on the grey level (0-255) over a 7x7 uniform window,
computed with integral images in numpy so that no image-science dependency is needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence, UnidentifiedImageError

from harness.kernel.core import StateActError

WINDOW = 7
"""Side of the square SSIM window, in pixels."""
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2


def open_image(path: str | None, role: str) -> Image.Image | None:
    """The image at `path` fully loaded; None when there is no such file, StateActError when
    unreadable."""
    if path is None or not Path(path).is_file():
        return None
    try:
        with Image.open(path) as image:
            image.load()
            return image.copy() if getattr(image, "n_frames", 1) == 1 else image_frames_kept(image)
    except (UnidentifiedImageError, OSError) as exc:
        raise StateActError(f"the {role} image {Path(path).name} cannot be read ({exc})") from None


def image_frames_kept(image: Image.Image) -> Image.Image:
    # An animation must stay readable after its file is closed: keep a copy of every frame.
    frames = [frame.convert("RGBA") for frame in ImageSequence.Iterator(image)]
    first = frames[0].copy()
    first.info["frames"] = frames
    return first


def frames(image: Image.Image) -> list[Image.Image]:
    """Every frame of an animation (a still image is one frame), as RGBA."""
    return image.info.get("frames") or [image.convert("RGBA")]


def has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def grey(image: Image.Image, background: int = 0) -> np.ndarray:
    """Grey levels (float, 0-255); transparent pixels show `background` (0 black, 255 white)."""
    if has_alpha(image):
        rgba = image.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (background, background, background, 255))
        image = Image.alpha_composite(base, rgba)
    return np.asarray(image.convert("L"), dtype=np.float64)


def window_mean(values: np.ndarray) -> np.ndarray:
    """Mean over every full WINDOW x WINDOW window (a 'valid' box filter via an integral image)."""
    size = min(WINDOW, *values.shape)
    total = np.pad(values, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    box = total[size:, size:] - total[:-size, size:] - total[size:, :-size] + total[:-size, :-size]
    return box / (size * size)


def ssim_maps(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(full SSIM map, structure-only map) of two equally sized grey images."""
    mean_a, mean_b = window_mean(a), window_mean(b)
    var_a = np.maximum(window_mean(a * a) - mean_a**2, 0.0)
    var_b = np.maximum(window_mean(b * b) - mean_b**2, 0.0)
    cov = window_mean(a * b) - mean_a * mean_b
    full = ((2 * mean_a * mean_b + C1) * (2 * cov + C2)) / (
        (mean_a**2 + mean_b**2 + C1) * (var_a + var_b + C2)
    )
    structure = (cov + C2 / 2) / (np.sqrt(var_a * var_b) + C2 / 2)
    return full, structure


def ssim(first: Image.Image, second: Image.Image, structure_only: bool = False) -> float:
    """Mean SSIM of two images; 0.0 when their sizes differ.

    With transparency the images are compared over black and over white and the worse score counts,
    so that a pixel made transparent is a difference even where its colour did not change.
    `structure_only` keeps only SSIM's structure term (local correlation), which is blind to the
    brightness and contrast changes that the edit metrics ask for.
    """
    if first.size != second.size:
        return 0.0
    backgrounds = (0, 255) if has_alpha(first) or has_alpha(second) else (0,)
    scores = []
    for background in backgrounds:
        full, structure = ssim_maps(grey(first, background), grey(second, background))
        scores.append(float((structure if structure_only else full).mean()))
    return min(scores)


def brightness(image: Image.Image) -> float:
    """Mean grey level, 0-255."""
    return float(grey(image).mean())


def contrast(image: Image.Image) -> float:
    """Standard deviation of the grey levels (RMS contrast)."""
    return float(grey(image).std())


def saturation(image: Image.Image) -> float:
    """Mean HSV saturation, 0-255."""
    return float(np.asarray(image.convert("RGB").convert("HSV"), dtype=np.float64)[..., 1].mean())


def normalized_grey(image: Image.Image, target: float = 128.0) -> np.ndarray:
    """Grey levels scaled to mean `target` and clipped, in 0-1: brightness changes cancel out."""
    values = grey(image)
    mean = values.mean()
    scaled = values * (target / mean) if mean > 0 else values
    return np.clip(scaled, 0, 255) / 255.0


def hsv_array(image: Image.Image) -> np.ndarray:
    """HSV channels (0-255 each, hue scaled from 0-360 degrees)."""
    return np.asarray(image.convert("RGB").convert("HSV"), dtype=np.float64)


def opaque_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """Bounding box of the pixels that are not fully transparent; None when all are."""
    if not has_alpha(image):
        return (0, 0, *image.size)
    return image.convert("RGBA").getchannel("A").getbbox()
