"""The `lstc` mode's GUI channel: a separate visual grounder turns a description into a point.

LocalLSTC's planner names what to click ("the Save button"); a grounder model (the seed uses
GTA1-7B) gets the screenshot and that description and answers the click point. Here the grounder is
any OpenAI-compatible vision endpoint (`--grounder openai/NAME`, e.g. a local vLLM server); the
point it gives, in the screenshot's pixels, goes through the GUI specialist's `computer` tool, so
scaling, bounds checks and xdotool are the same as the GUI specialist's.
"""

from __future__ import annotations

import base64
import re

from harness.kernel.core import StateActError, ToolError
from harness.models import ModelConfig, endpoint_provider, make_model
from subagents import ComputerTool, Desktop

GUI_TOOLS = ("click", "double_click", "right_click", "type", "key")
CLICKS = {"click": "left_click", "double_click": "double_click", "right_click": "right_click"}
GROUNDER_SYSTEM = (
    "You are a GUI grounding model. Given a screenshot and the description of one element, answer "
    "the pixel point to click on that element as (x, y), measured in the screenshot's pixels from "
    "its top-left corner. Answer with the point only."
)
POINT = re.compile(r"(-?\d+(?:\.\d+)?)\s*[,\s]\s*(-?\d+(?:\.\d+)?)")


# What a grounder's numbers measure: screenshot pixels (GTA1, Qwen2.5-VL), a 0-1000 grid
# (UI-TARS, Qwen-VL 1/2, CogAgent) or fractions of the width and height (0-1).
COORDINATE_SCALES = {"pixels": None, "0-1000": 1000.0, "0-1": 1.0}


def parse_point(
    text: str, size: tuple[int, int] | None = None, coordinates: str = "pixels"
) -> tuple[float, float]:
    """The first `x, y` pair in a grounder's answer (`(412, 230)`, `[412,230]`, `x=412 y=230`…)
    in screenshot pixels; with `size`, a point outside the screenshot is a ToolError."""
    found = POINT.search(re.sub(r"[a-zA-Z_]+\s*[=:]", " ", text or ""))
    if found is None:
        raise ToolError(f"the grounder gave no point (it answered {(text or '')[:80]!r})")
    x, y = float(found.group(1)), float(found.group(2))
    full = COORDINATE_SCALES[coordinates]
    if full is not None and size is not None:
        x, y = x / full * size[0], y / full * size[1]
    if size is not None and not (0 <= x < size[0] and 0 <= y < size[1]):
        raise ToolError(
            f"the grounder's point ({found.group(1)}, {found.group(2)}) read as {coordinates} is "
            f"outside the {size[0]}x{size[1]} screenshot; if it answers on another scale, set "
            f"--grounder-coordinates ({', '.join(COORDINATE_SCALES)})"
        )
    return x, y


def grounder_options(spec: str, main: ModelConfig, base_url: str | None) -> ModelConfig:
    """The grounder's settings: its own endpoint when given, else the main model's."""
    provider = endpoint_provider(spec)
    if provider != "openai":
        raise StateActError(
            f"the grounder {spec!r} must be an OpenAI-compatible vision endpoint: openai/NAME"
        )
    options = main.for_provider(provider)
    return options.model_copy(update={"base_url": base_url}) if base_url else options


class Grounder:
    """A vision model that locates a described element on a screenshot."""

    def __init__(self, spec: str, options: ModelConfig, stats=None, coordinates: str = "pixels"):
        self.model = make_model(spec, options)
        self.name = spec.partition("/")[2]
        self.stats = stats
        self.coordinates = coordinates

    def locate(self, png: bytes, target: str, size: tuple[int, int]) -> tuple[float, float]:
        image = {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            },
        }
        text = f"Element: {target}\nThe screenshot is {size[0]}x{size[1]} pixels."
        message = {"role": "user", "content": [image, {"type": "text", "text": text}]}
        reply = self.model.complete(GROUNDER_SYSTEM, [message], [])
        if self.stats is not None:
            self.stats.usage.add(reply.usage)
            self.stats.model_turns += 1
        return parse_point(reply.text, size, self.coordinates)


class GuiChannel:
    """Clicks by description, typing and keys on the sandbox's desktop; keeps the last screen."""

    def __init__(self, sandbox, display_size: tuple[int, int], grounder: Grounder, stats=None):
        self.desktop = Desktop(sandbox, display_size)
        self.grounder = grounder
        self.stats = stats
        self._computer: ComputerTool | None = None
        self.last_png: bytes | None = None
        self.before_png: bytes | None = None

    @property
    def computer(self) -> ComputerTool:
        if self._computer is None:  # starts the desktop on first use
            self._computer = ComputerTool(self.desktop, self.grounder.name, self.stats)
        return self._computer

    def screenshot(self) -> bytes:
        self.last_png = self.computer(action="screenshot").image_png
        return self.last_png

    def act(self, tool: str, text: str) -> str:
        """Run one GUI action; returns what happened (ToolError when it could not be done).
        `before_png` is the screen just before it: Step Abstraction's changed region is measured
        from there, not from an older screenshot (an application that drew its window since, say
        while a bash step waited for it, would otherwise cancel out the change the action made)."""
        self.before_png = None
        shot = self.screenshot()
        self.before_png = shot
        if tool in CLICKS:
            size = self.computer.scale.declared
            x, y = self.grounder.locate(shot, text, size)
            result = self.computer(action=CLICKS[tool], coordinate=[round(x), round(y)])
            self.last_png = result.image_png
            screen = self.computer.scale.to_screen([round(x), round(y)])
            return (
                f"{tool} on {text!r}: the grounder chose ({round(x)}, {round(y)}), screen {screen}"
            )
        action = {"type": ("type", "text"), "key": ("key", "text")}[tool]
        result = self.computer(action=action[0], **{action[1]: text})
        self.last_png = result.image_png
        return f"{tool} {text!r} done"
