"""Sandbox image definitions (`base`, `desktop`, `osworld2`) and the builder that turns them into
Docker images."""

from sandboxes.images.build import (
    IMAGE_NAMES,
    build_image,
    ensure_images,
    image_exists,
    image_ref,
)

__all__ = ["IMAGE_NAMES", "build_image", "ensure_images", "image_exists", "image_ref"]
