"""Image metrics on small generated pictures: a matching result scores 1.0, a wrong one 0.0."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

from harness.kernel.core import StateActError
from tasks.evaluate import run_metric_value
from tasks.metrics import METRICS
from tasks.metrics.image_ops import ssim
from tasks.metrics.image_similarity import compare_images
from tasks.metrics.images import (
    check_brightness_decrease_and_structure_sim,
    check_config_status,
    check_contrast_increase_and_structure_sim,
    check_green_background,
    check_image_file_size,
    check_image_mirror,
    check_image_size,
    check_palette_and_structure_sim,
    check_saturation_increase_and_structure_sim,
    check_structure_sim,
    check_structure_sim_resized,
    check_structure_sim_with_threshold,
    check_triangle_position,
    compare_image_list,
)


def scene(seed: int = 0, size: tuple[int, int] = (96, 64)) -> Image.Image:
    """A colourful, asymmetric test picture with texture."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 1, size[0])[None, :]
    y = np.linspace(0, 1, size[1])[:, None]
    rgb = np.stack(
        [120 + 80 * x + 0 * y, 60 + 120 * y + 0 * x, 90 + 60 * np.sin(6 * x) * np.cos(4 * y)],
        axis=-1,
    )
    rgb = np.clip(rgb + rng.normal(0, 4, rgb.shape), 0, 255).astype(np.uint8)
    image = Image.fromarray(rgb, "RGB")
    draw = ImageDraw.Draw(image)
    draw.rectangle((8, 8, 30, 40), fill=(200, 30, 30))
    draw.ellipse((50, 20, 80, 50), fill=(20, 40, 200))
    return image


def save(image: Image.Image, tmp_path, name: str) -> str:
    path = tmp_path / name
    image.save(path)
    return str(path)


def test_image_metrics_are_registered():
    for name in (
        "compare_images",
        "check_structure_sim",
        "check_brightness_decrease_and_structure_sim",
        "check_palette_and_structure_sim",
        "check_config_status",
        "check_image_size",
    ):
        assert name in METRICS


def test_ssim_is_one_for_equal_images_and_low_for_others():
    picture = scene()
    assert ssim(picture, picture.copy()) == pytest.approx(1.0)
    assert ssim(picture, scene(seed=1)) < 0.99
    assert ssim(picture, ImageOps.flip(picture)) < 0.5
    assert ssim(picture, picture.resize((48, 32))) == 0.0


def test_compare_images_is_the_ssim_of_the_grey_pictures(tmp_path):
    # OSWorld's compare_images returns the SSIM itself (tests/osworld_cases/media pins its values).
    gold = save(scene(), tmp_path, "gold.png")
    assert compare_images(save(scene(), tmp_path, "same.png"), gold) == pytest.approx(1.0)
    changed = scene()
    changed.putpixel((0, 0), (0, 0, 0))
    near = compare_images(save(changed, tmp_path, "changed.png"), gold)
    assert 0.95 < near < 1.0
    assert compare_images(save(ImageOps.flip(scene()), tmp_path, "flip.png"), gold) < 0.5
    assert run_metric_value("compare_images", str(tmp_path / "absent.png"), gold, {}) == 0.0


def test_compare_images_with_a_reference_base_scales_the_result(tmp_path):
    gold = save(scene(), tmp_path, "gold.png")
    bigger = save(scene().resize((192, 128), Image.Resampling.LANCZOS), tmp_path, "big.png")
    similarity = compare_images(bigger, gold)
    scaled = compare_images(bigger, gold, reference_base_result=0.11)
    assert scaled == pytest.approx((similarity - 0.11) / (1 - 0.11))
    other = save(ImageOps.flip(scene()), tmp_path, "other.png")
    assert compare_images(other, gold, reference_base_result=0.9) == 0.0


def test_structure_sim_and_threshold(tmp_path):
    gold = save(scene(), tmp_path, "gold.png")
    near = np.asarray(scene(), dtype=np.int32) + np.random.default_rng(3).integers(
        -3, 4, (64, 96, 3)
    )
    near_path = save(Image.fromarray(np.clip(near, 0, 255).astype(np.uint8)), tmp_path, "near.png")
    assert check_structure_sim(near_path, gold) == 1.0
    assert check_structure_sim(save(ImageOps.flip(scene()), tmp_path, "f.png"), gold) == 0.0
    assert check_structure_sim_with_threshold(near_path, gold, ssim_threshold=0.85) == 1.0
    assert check_structure_sim_with_threshold(near_path, gold, ssim_threshold=1.01) == 0.0


def test_transparency_counts_in_structure_sim(tmp_path):
    cutout = scene().convert("RGBA")
    alpha = Image.new("L", cutout.size, 0)
    ImageDraw.Draw(alpha).ellipse((20, 10, 76, 54), fill=255)
    cutout.putalpha(alpha)
    gold = save(cutout, tmp_path, "gold.png")
    assert check_structure_sim(save(cutout, tmp_path, "same.png"), gold) == 1.0
    assert check_structure_sim(save(scene().convert("RGBA"), tmp_path, "opaque.png"), gold) == 0.0


def test_brightness_decrease(tmp_path):
    original = save(scene(), tmp_path, "original.png")
    darker = save(ImageEnhance.Brightness(scene()).enhance(0.7), tmp_path, "darker.png")
    brighter = save(ImageEnhance.Brightness(scene()).enhance(1.3), tmp_path, "brighter.png")
    assert check_brightness_decrease_and_structure_sim(darker, original) == 1.0
    assert check_brightness_decrease_and_structure_sim(brighter, original) == 0.0
    # The task that brightens passes the original as result and the edit as expected.
    assert check_brightness_decrease_and_structure_sim(original, brighter, threshold=0.15) == 1.0
    other = save(ImageEnhance.Brightness(ImageOps.flip(scene())).enhance(0.7), tmp_path, "o.png")
    assert check_brightness_decrease_and_structure_sim(other, original) == 0.0


def test_contrast_and_saturation_increase(tmp_path):
    original = save(scene(), tmp_path, "original.png")
    stronger = save(ImageEnhance.Contrast(scene()).enhance(1.5), tmp_path, "contrast.png")
    weaker = save(ImageEnhance.Contrast(scene()).enhance(0.6), tmp_path, "flat.png")
    assert check_contrast_increase_and_structure_sim(stronger, original) == 1.0
    assert check_contrast_increase_and_structure_sim(weaker, original) == 0.0
    vivid = save(ImageEnhance.Color(scene()).enhance(1.6), tmp_path, "vivid.png")
    dull = save(ImageEnhance.Color(scene()).enhance(0.5), tmp_path, "dull.png")
    assert check_saturation_increase_and_structure_sim(vivid, original) == 1.0
    assert check_saturation_increase_and_structure_sim(dull, original) == 0.0


def test_palette_mirror_and_resize(tmp_path):
    original = save(scene(), tmp_path, "original.png")
    palette = save(scene().quantize(colors=256), tmp_path, "palette.png")
    assert check_palette_and_structure_sim(palette, original) == 1.0
    assert check_palette_and_structure_sim(original, original) == 0.0
    mirrored = save(ImageOps.mirror(scene()), tmp_path, "mirror.png")
    assert check_image_mirror(mirrored, original) == 1.0
    assert check_image_mirror(original, original) == 0.0
    resized = save(scene().resize((192, 128), Image.Resampling.LANCZOS), tmp_path, "resized.png")
    assert check_structure_sim_resized(resized, original) == 1.0
    assert check_structure_sim_resized(mirrored, original) == 0.0


def test_image_size_and_file_size(tmp_path):
    layer = Image.new("RGBA", (200, 600), (0, 0, 0, 0))
    layer.paste(scene().resize((120, 512)), (40, 20))
    path = save(layer, tmp_path, "resized.png")
    assert check_image_size(path, {"height": 512, "ignore_transparent": True}) == 1.0
    assert check_image_size(path, {"height": 512}) == 0.0
    assert check_image_size(path, {"width": 200, "height": 600}) == 1.0
    with pytest.raises(StateActError, match="width"):
        check_image_size(path, {})
    jpeg = tmp_path / "small.jpg"
    scene().save(jpeg, quality=50)
    assert check_image_file_size(str(jpeg), {"max_size": 600000}) == 1.0
    assert check_image_file_size(str(jpeg), {"max_size": 100}) == 0.0


def test_green_background(tmp_path):
    white = Image.new("RGB", (60, 40), (255, 255, 255))
    ImageDraw.Draw(white).rectangle((20, 10, 40, 30), fill=(200, 30, 30))
    green = Image.new("RGB", (60, 40), (0, 200, 0))
    ImageDraw.Draw(green).rectangle((20, 10, 40, 30), fill=(200, 30, 30))
    everything_green = Image.new("RGB", (60, 40), (0, 200, 0))
    original = save(white, tmp_path, "white.png")
    assert check_green_background(save(green, tmp_path, "green.png"), original) == 1.0
    assert check_green_background(original, original) == 0.0
    assert check_green_background(save(everything_green, tmp_path, "all.png"), original) == 0.0


def test_triangle_position(tmp_path):
    def picture(left: int) -> str:
        image = Image.new("RGB", (200, 100), (30, 30, 120))
        draw = ImageDraw.Draw(image)
        draw.polygon([(left, 70), (left + 40, 70), (left + 20, 30)], fill=(250, 220, 20))
        draw.polygon([(10, 90), (30, 90), (20, 70)], fill=(20, 200, 20))
        return save(image, tmp_path, f"t{left}.png")

    assert check_triangle_position(picture(80)) == 1.0
    assert check_triangle_position(picture(10)) == 0.0


def test_gimp_config_status(tmp_path):
    gimprc = tmp_path / "gimprc"
    gimprc.write_text('# GIMP gimprc\n(undo-levels 100)\n(theme "Light")\n(show-tips no)\n')
    rules = {"type:": "key-value", "key": "theme", "value": '"Light"'}
    assert check_config_status(str(gimprc), rules) == 1.0
    assert check_config_status(str(gimprc), {**rules, "value": '"Dark"'}) == 0.0
    assert check_config_status(str(gimprc), {"key": "undo-levels", "value": "100"}) == 1.0
    assert check_config_status(str(gimprc), {"key": "hide-docks", "value": "yes"}) == 0.0
    assert check_config_status(str(tmp_path / "absent"), rules) == 0.0
    with pytest.raises(StateActError, match="key"):
        check_config_status(str(gimprc), {"value": "1"})


def test_unreadable_image_is_a_clear_error(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_text("not a png")
    with pytest.raises(StateActError, match="cannot be read"):
        check_structure_sim(str(broken), str(broken))


def test_compare_image_list(tmp_path):
    golds = [save(scene(seed), tmp_path, f"gold{seed}.png") for seed in (0, 1)]
    same = [save(scene(seed), tmp_path, f"same{seed}.png") for seed in (0, 1)]
    assert compare_image_list(same, golds) == 1.0
    assert compare_image_list(list(reversed(same)), golds) == 0.0
    assert compare_image_list(same[0], golds[0]) == 1.0
    assert compare_image_list(same[:1], golds) == 0.0
