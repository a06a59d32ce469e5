"""OSWorld's compare_images (vlc.py): the mean SSIM of the two pictures in grey, as scikit-image's
structural_similarity computes it with its defaults, optionally rescaled by `reference_base_result`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from tasks.metrics.documents import UnreadableFile, file_metric

WINDOW = 7
DATA_RANGE = 255.0  # uint8 pictures
C1, C2 = (0.01 * DATA_RANGE) ** 2, (0.03 * DATA_RANGE) ** 2


def box_mean(values: np.ndarray) -> np.ndarray:
    """The mean of every full WINDOW x WINDOW window (what uniform_filter gives away from the
    border, which scikit-image crops off)."""
    total = np.pad(values, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    w = WINDOW
    box = total[w:, w:] - total[:-w, w:] - total[w:, :-w] + total[:-w, :-w]
    return box / (w * w)


def mean_ssim(first: np.ndarray, second: np.ndarray) -> float:
    """scikit-image's structural_similarity (7x7 box window, sample covariance) of two grey
    arrays."""
    if min(first.shape) < WINDOW:
        raise UnreadableFile("the pictures are smaller than SSIM's 7-pixel window")
    x, y = first.astype(np.float64), second.astype(np.float64)
    ux, uy = box_mean(x), box_mean(y)
    norm = WINDOW * WINDOW / (WINDOW * WINDOW - 1)
    vx = norm * (box_mean(x * x) - ux * ux)
    vy = norm * (box_mean(y * y) - uy * uy)
    vxy = norm * (box_mean(x * y) - ux * uy)
    ssim = ((2 * ux * uy + C1) * (2 * vxy + C2)) / ((ux * ux + uy * uy + C1) * (vx + vy + C2))
    return float(ssim.mean())


def grey(path: str) -> Image.Image:
    try:
        with Image.open(path) as image:
            return image.convert("L")
    except (UnidentifiedImageError, OSError) as exc:
        raise UnreadableFile(f"{path} is not a readable image ({exc})") from None


@file_metric("compare_images", files=2)
def compare_images(
    result: str, expected: str, reference_base_result: float | None = None, **_: Any
) -> float:
    """The SSIM of the two pictures in grey, both resized (Lanczos) to the smaller size — the
    smaller by (width, height) tuple order, as OSWorld takes it. With `reference_base_result` the
    SSIM is rescaled so that base + 0.01 and below score 0 and 1 scores 1."""
    first, second = grey(result), grey(expected)
    size = min(first.size, second.size)
    first = first.resize(size, Image.Resampling.LANCZOS)
    second = second.resize(size, Image.Resampling.LANCZOS)
    similarity = mean_ssim(np.asarray(first), np.asarray(second))
    if reference_base_result is None:
        return similarity
    base = float(reference_base_result)
    return (similarity - base) / (1 - base) if similarity >= base + 0.01 else 0.0
