"""`view_image`: look at an image file in the sandbox (read-only), scaled to a model-friendly
size."""

from __future__ import annotations

import base64

from harness.kernel.core import ToolResult, ToolSpec
from sandboxes.toolbox.protocol import ImageView
from sandboxes.typed import run


class ViewImageTool:
    name = "view_image"

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description="Show an image file from the machine (PNG, JPEG, ...). Read-only.",
            input_schema={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path of the image."}
                },
                "required": ["path"],
            },
        )

    def __call__(self, path: str) -> ToolResult:
        image = run(self.sandbox, ImageView(path))
        note = f"{path}: {image.original_width}x{image.original_height}"
        if (image.width, image.height) != (image.original_width, image.original_height):
            note += f", shown at {image.width}x{image.height}"
        return ToolResult(output=note, image_png=base64.b64decode(image.png_b64))
