"""`view_image`: look at an image file in the sandbox (read-only), scaled to a model-friendly
size."""

from __future__ import annotations

import base64

from harness.kernel.core import ToolResult, ToolSpec


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
        result = self.sandbox.call("image.view", path=path)
        note = f"{path}: {result['original_width']}x{result['original_height']}"
        if (result["width"], result["height"]) != (
            result["original_width"],
            result["original_height"],
        ):
            note += f", shown at {result['width']}x{result['height']}"
        return ToolResult(output=note, image_png=base64.b64decode(result["png_b64"]))
