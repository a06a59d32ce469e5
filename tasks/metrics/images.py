"""Image metrics (GIMP, VLC snapshots, exported slides, wallpapers) and GIMP's config check.

Thresholds: "same structure" is a mean SSIM of at least STRUCTURE_THRESHOLD (0.9) on the grey
level; the edit metrics (brightness, contrast, saturation) compare SSIM's structure term only,
because their edit changes the luminance and contrast terms on purpose. A missing result image
scores 0.0.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from harness.kernel.core import StateActError
from tasks.metrics.image_ops import (
    brightness,
    contrast,
    frames,
    has_alpha,
    hsv_array,
    normalized_grey,
    opaque_box,
    open_image,
    saturation,
    ssim,
)
from tasks.metrics.registry import metric

STRUCTURE_THRESHOLD = 0.9
"""Minimum mean SSIM for two images to count as the same picture."""
GREEN_SHARE = 0.95
"""Share of the background (and of the object) that must come out right in
check_green_background."""


def image_pair(result: str | None, expected: str | None) -> tuple[Image.Image, Image.Image] | None:
    """Both images, or None when one is missing (a missing gold fails earlier, in its getter; one
    task reads the agent's file as `expected`)."""
    got, want = open_image(result, "result"), open_image(expected, "expected")
    return None if got is None or want is None else (got, want)


def same_pixels(first: Image.Image, second: Image.Image) -> bool:
    if first.size != second.size:
        return False
    return np.array_equal(np.asarray(first.convert("RGBA")), np.asarray(second.convert("RGBA")))


def identical_images(
    result: str | None, expected: str | None, reference_base_result: float | None = None, **_: Any
) -> float:
    """1.0 when the images (every frame of an animation) have identical pixels.

    With `reference_base_result` (the similarity that the untouched machine already reaches, as in
    the wallpaper tasks) the result is scaled to the expected size and passes when its SSIM to the
    expected image is higher than that base and at least STRUCTURE_THRESHOLD.
    """
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    if reference_base_result is not None:
        scaled = got.convert("RGB").resize(want.size, Image.Resampling.LANCZOS)
        score = ssim(scaled, want.convert("RGB"))
        return float(score > float(reference_base_result) and score >= STRUCTURE_THRESHOLD)
    got_frames, want_frames = frames(got), frames(want)
    if len(got_frames) != len(want_frames):
        return 0.0
    return float(all(same_pixels(a, b) for a, b in zip(got_frames, want_frames, strict=True)))


@metric("check_structure_sim")
def check_structure_sim(result: str | None, expected: str | None, **_: Any) -> float:
    """1.0 when both images have the same size and a mean SSIM of at least 0.9."""
    pair = image_pair(result, expected)
    return float(pair is not None and ssim(*pair) >= STRUCTURE_THRESHOLD)


@metric("check_structure_sim_with_threshold")
def check_structure_sim_with_threshold(
    result: str | None, expected: str | None, ssim_threshold: float = 0.85, **_: Any
) -> float:
    """check_structure_sim with the task's own SSIM threshold."""
    pair = image_pair(result, expected)
    return float(pair is not None and ssim(*pair) >= float(ssim_threshold))


@metric("check_structure_sim_resized")
def check_structure_sim_resized(result: str | None, expected: str | None, **_: Any) -> float:
    """The result's visible content, scaled back to the expected size, has SSIM >= 0.9 to it."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    box = opaque_box(got)
    if box is None:
        return 0.0
    scaled = got.crop(box).resize(want.size, Image.Resampling.LANCZOS)
    return float(ssim(scaled, want) >= STRUCTURE_THRESHOLD)


@metric("check_file_exists_and_structure_sim")
def check_file_exists_and_structure_sim(
    result: str | None, expected: str | None, **_: Any
) -> float:
    """The result image exists and has the expected picture (SSIM >= 0.9)."""
    return check_structure_sim(result, expected)


def same_structure_mse(first: Image.Image, second: Image.Image, threshold: float) -> bool:
    """Equal sizes and, after both are scaled to the same mean brightness, an MSE (0-1 scale) <=
    threshold."""
    if first.size != second.size:
        return False
    difference = normalized_grey(first) - normalized_grey(second)
    return float(np.mean(difference**2)) <= threshold


@metric("check_brightness_decrease_and_structure_sim")
def check_brightness_decrease_and_structure_sim(
    result: str | None, expected: str | None, threshold: float = 0.03, **_: Any
) -> float:
    """The result is darker than the expected (original) image and otherwise the same picture.

    `threshold` bounds the mean squared difference (0-1 grey scale) left after both images are
    scaled to the same mean brightness. One task swaps the roles (its result is the original and
    its expected the brightened copy); the order of the arguments keeps that meaning right.
    """
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    darker = brightness(got) < brightness(want)
    return float(darker and same_structure_mse(got, want, float(threshold)))


@metric("check_contrast_increase_and_structure_sim")
def check_contrast_increase_and_structure_sim(
    result: str | None, expected: str | None, **_: Any
) -> float:
    """The result has a higher RMS contrast than the original and the same structure."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    stronger = contrast(got) > contrast(want)
    return float(stronger and ssim(got, want, structure_only=True) >= STRUCTURE_THRESHOLD)


@metric("check_saturation_increase_and_structure_sim")
def check_saturation_increase_and_structure_sim(
    result: str | None, expected: str | None, **_: Any
) -> float:
    """The result has a higher mean saturation than the original and the same structure."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    more = saturation(got) > saturation(want)
    return float(more and ssim(got, want, structure_only=True) >= STRUCTURE_THRESHOLD)


@metric("check_palette_and_structure_sim")
def check_palette_and_structure_sim(result: str | None, expected: str | None, **_: Any) -> float:
    """The result is a palette (indexed colour) image of the expected picture."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    return float(got.mode == "P" and ssim(got, want) >= STRUCTURE_THRESHOLD)


@metric("check_image_mirror")
def check_image_mirror(result: str | None, expected: str | None, **_: Any) -> float:
    """The result is the expected (original) image flipped left to right."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    mirrored = ImageOps.mirror(want.convert("RGB"))
    to_mirror = ssim(got.convert("RGB"), mirrored)
    # A picture that is not symmetric must look more like its mirror than like itself.
    symmetric = same_pixels(mirrored, want.convert("RGB"))
    closer = symmetric or to_mirror > ssim(got.convert("RGB"), want.convert("RGB"))
    return float(to_mirror >= STRUCTURE_THRESHOLD and closer)


def green_mask(rgb: np.ndarray) -> np.ndarray:
    """Pixels whose green channel clearly dominates red and blue."""
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return green - np.maximum(red, blue) >= 64


@metric("check_green_background")
def check_green_background(result: str | None, expected: str | None, **_: Any) -> float:
    """Where the original is white background the result is green; the object is left as it was."""
    pair = image_pair(result, expected)
    if pair is None:
        return 0.0
    got, want = pair
    if got.size != want.size:
        return 0.0
    got_rgb = np.asarray(got.convert("RGB"), dtype=np.int32)
    want_rgb = np.asarray(want.convert("RGB"), dtype=np.int32)
    background = (want_rgb >= 245).all(axis=-1)
    if not background.any():
        raise StateActError("the expected image has no white background to compare with")
    green_share = green_mask(got_rgb)[background].mean()
    obj = ~background
    kept = (np.abs(got_rgb - want_rgb).max(axis=-1) <= 16)[obj].mean() if obj.any() else 1.0
    return float(green_share >= GREEN_SHARE and kept >= GREEN_SHARE)


@metric("check_triangle_position")
def check_triangle_position(result: str | None, tolerance: float = 0.05, **_: Any) -> float:
    """The yellow shape's bounding box is centred in the picture (within 5% of each side)."""
    image = open_image(result, "result")
    if image is None:
        return 0.0
    hsv = hsv_array(image)
    hue_degrees = hsv[..., 0] * 360 / 255
    yellow = (hue_degrees >= 40) & (hue_degrees <= 70) & (hsv[..., 1] >= 128) & (hsv[..., 2] >= 128)
    if has_alpha(image):
        yellow &= np.asarray(image.convert("RGBA").getchannel("A")) > 0
    rows, cols = np.nonzero(yellow)
    if rows.size == 0:
        return 0.0
    width, height = image.size
    centre_x = (cols.min() + cols.max() + 1) / 2
    centre_y = (rows.min() + rows.max() + 1) / 2
    return float(
        abs(centre_x - width / 2) <= tolerance * width
        and abs(centre_y - height / 2) <= tolerance * height
    )


@metric("check_image_size")
def check_image_size(result: str | None, rules: dict, **_: Any) -> float:
    """The image has the `width`/`height` the rules name (of its visible part with
    `ignore_transparent`)."""
    image = open_image(result, "result")
    if image is None:
        return 0.0
    if not isinstance(rules, dict) or not {"width", "height"} & rules.keys():
        raise StateActError("check_image_size needs a 'width' or 'height' rule")
    box = opaque_box(image) if rules.get("ignore_transparent") else (0, 0, *image.size)
    if box is None:
        return 0.0
    width, height = box[2] - box[0], box[3] - box[1]
    return float(rules.get("width", width) == width and rules.get("height", height) == height)


@metric("check_image_file_size")
def check_image_file_size(result: str | None, rules: dict, **_: Any) -> float:
    """The file is a readable image no larger than `max_size` bytes."""
    if not isinstance(rules, dict) or "max_size" not in rules:
        raise StateActError("check_image_file_size needs a 'max_size' rule")
    if open_image(result, "result") is None:
        return 0.0
    return float(Path(result).stat().st_size <= int(rules["max_size"]))


def gimp_setting(text: str, key: str) -> str | None:
    """The value of a top-level `(key value)` line of a GIMP config file (gimprc, sessionrc)."""
    pattern = re.compile(rf"^\({re.escape(key)}\s+(.*)\)\s*$")
    for line in text.splitlines():
        found = pattern.match(line.strip())
        if found:
            return found.group(1).strip()
    return None


@metric("check_config_status")
def check_config_status(result: str | None, rules: dict, **_: Any) -> float:
    """The GIMP config file sets `key` to `value` (compared as written, quotes included)."""
    if not isinstance(rules, dict) or "key" not in rules or "value" not in rules:
        raise StateActError("check_config_status needs 'key' and 'value' rules")
    kind = rules.get("type", rules.get("type:", "key-value"))  # the task files spell it "type:"
    if kind != "key-value":
        raise StateActError(f"check_config_status rule type {kind!r} is not supported")
    if result is None or not Path(result).is_file():
        return 0.0
    text = Path(result).read_text(encoding="utf-8", errors="replace")
    return float(gimp_setting(text, rules["key"]) == str(rules["value"]))


@metric("compare_image_list")
def compare_image_list(result: Any, expected: Any, **_: Any) -> float:
    """Identical pictures over paired lists of images (a single path is a list of one)."""
    results = result if isinstance(result, list) else [result]
    golds = expected if isinstance(expected, list) else [expected]
    if len(results) != len(golds):
        return 0.0
    pairs = zip(results, golds, strict=True)
    return float(all(identical_images(r, g) == 1.0 for r, g in pairs))
