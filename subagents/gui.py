"""The GUI specialist's `computer` tool: Anthropic's computer-use actions on the sandbox's desktop.

Screenshots are scaled to what the model can see without silent downsampling, the scaled size is
the declared display size, and model coordinates are mapped back to screen pixels. Bad input (a
point off the screen, an unknown key, a missing parameter) is a `ToolError` the model can
correct.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.kernel.core import ToolError, ToolResult, ToolSpec
from harness.models.claude_tools import COMPUTER_TOOLSET, computer_tool_version
from harness.models.pricing import parse_claude_name

from .desktop import Desktop

ACTIONS = (
    "screenshot",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "mouse_move",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "type",
    "key",
    "hold_key",
    "scroll",
    "wait",
    "zoom",
    "cursor_position",
)
CLICKS = {
    "left_click": ["click", "1"],
    "right_click": ["click", "3"],
    "middle_click": ["click", "2"],
    "double_click": ["click", "--repeat", "2", "--delay", "10", "1"],
    "triple_click": ["click", "--repeat", "3", "--delay", "10", "1"],
}
SCROLL_BUTTONS = {"up": "4", "down": "5", "left": "6", "right": "7"}
TYPE_CHUNK = 50
MAX_WAIT_S = 60.0
KEY_ALIASES = {
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "space": "space",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "pageup": "Page_Up",
    "page_up": "Page_Up",
    "pagedown": "Page_Down",
    "page_down": "Page_Down",
    "home": "Home",
    "end": "End",
    "insert": "Insert",
    "ctrl": "ctrl",
    "control": "ctrl",
    "alt": "alt",
    "shift": "shift",
    "super": "super",
    "cmd": "super",
    "win": "super",
    "meta": "super",
    "capslock": "Caps_Lock",
    "printscreen": "Print",
    "menu": "Menu",
    **{f"f{n}": f"F{n}" for n in range(1, 13)},
}


@dataclass(frozen=True)
class ScreenScale:
    """How the real screen maps onto the image size the model is told about."""

    screen: tuple[int, int]
    """The real screen in pixels."""
    declared: tuple[int, int]
    """The scaled size: screenshots have it, and model coordinates are in it."""

    def to_screen(self, point, name: str = "coordinate") -> tuple[int, int]:
        """Model coordinates -> screen pixels; ToolError if they are malformed or off the screen."""
        if (
            not isinstance(point, (list, tuple))
            or len(point) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in point)
        ):
            raise ToolError(f"`{name}` must be a pair of numbers [x, y], got {point!r}.")
        width, height = self.declared
        x, y = point
        if not (0 <= x < width and 0 <= y < height):
            raise ToolError(
                f"`{name}` {list(point)} is outside the screen: x must be in 0..{width - 1} and y "
                f"in 0..{height - 1}."
            )
        # Centre to centre: the screen pixel under the middle of the model's pixel, so
        # to_model(to_screen(p)) == p for every point when the screenshot is scaled down.
        return (
            min(self.screen[0] - 1, int((x + 0.5) * self.screen[0] / width)),
            min(self.screen[1] - 1, int((y + 0.5) * self.screen[1] / height)),
        )

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        """Screen pixels -> the screenshot pixel that shows them."""
        return (
            min(self.declared[0] - 1, int((x + 0.5) * self.declared[0] / self.screen[0])),
            min(self.declared[1] - 1, int((y + 0.5) * self.declared[1] / self.screen[1])),
        )


EXACT_RATIO_KEEPS = 0.97
"""An exact-ratio screenshot size is used when it keeps this share of the width."""


def image_limits(model_name: str) -> tuple[int, float | None]:
    """(longest edge, pixel budget) a model sees 1:1; larger images would be downsampled
    silently."""
    parsed = parse_claude_name(model_name)
    if parsed is not None:
        family, major, minor = parsed
        if computer_tool_version(model_name) == COMPUTER_TOOLSET or (
            family == "opus" and (major, minor) >= (4, 7)
        ):
            return 2576, None
    return 1568, 1.15e6


def screen_scale(width: int, height: int, model_name: str) -> ScreenScale:
    """`scale = min(1, long_edge_limit / long_edge, sqrt(pixel_budget / (w * h)))`, then rounded
    down to a size with the screen's exact aspect ratio (1920x1080 -> 16m x 9m), so both axes
    share one factor, as OSWorld's 1920x1080 -> 1280x720; a ratio with no such size near the
    limit (1366x768 -> 683x384 at best) keeps the floored size."""
    long_edge, pixels = image_limits(model_name)
    scale = min(1.0, long_edge / max(width, height))
    if pixels is not None:
        scale = min(scale, math.sqrt(pixels / (width * height)))
    # floor, with a hair of slack so 3000 * (1568 / 3000) stays 1568 despite float rounding
    declared = (max(1, int(width * scale + 1e-6)), max(1, int(height * scale + 1e-6)))
    if scale < 1.0:
        step = math.gcd(width, height)
        steps = int(declared[0] * step / width + 1e-6)
        exact = (width // step * steps, height // step * steps)
        if exact[0] >= declared[0] * EXACT_RATIO_KEEPS:
            declared = exact
    return ScreenScale((width, height), declared)


def key_combo(text) -> list[str]:
    """`ctrl+s Return` -> xdotool key arguments with keysyms; ToolError for an empty or odd
    value."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError(
            "`text` must name the key(s) to press, e.g. `Return`, `ctrl+s` or `alt+F4`."
        )
    combos = []
    for combo in text.split():
        parts = combo.split("+")
        if any(not part for part in parts):
            raise ToolError(f"malformed key combination {combo!r}; write it like `ctrl+shift+t`.")
        combos.append("+".join(KEY_ALIASES.get(part.lower(), part) for part in parts))
    return combos


class ComputerTool:
    """Anthropic's `computer` tool (native where the model has it, a function tool otherwise)."""

    name = "computer"

    def __init__(self, desktop: Desktop, model_name: str, stats=None):
        self.desktop = desktop
        self.model_name = model_name
        self.stats = stats
        width, height = desktop.requested_size
        self.scale = screen_scale(width, height, model_name)

    def spec(self) -> ToolSpec:
        version = computer_tool_version(self.model_name)
        params = {
            "display_width_px": self.scale.declared[0],
            "display_height_px": self.scale.declared[1],
        }
        if version != "computer_20250124":
            params["enable_zoom"] = True
        width, height = self.scale.declared
        return ToolSpec(
            name=self.name,
            description=(
                f"Use the mouse and keyboard on a {width}x{height} screen and take "
                "screenshots. Coordinates are [x, y] pixels of the screenshot, origin top left. "
                "Every action except screenshot, zoom and cursor_position returns a screenshot "
                "taken once the screen settled. `key` takes X keysyms and combinations (`Return`, "
                "`ctrl+s`, `alt+F4`); `type` types text as given."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "coordinate": {
                        "type": "array",
                        "items": {"type": "number"},
                        "description": "[x, y]",
                    },
                    "start_coordinate": {
                        "type": "array",
                        "items": {"type": "number"},
                        "description": "drag start [x, y]",
                    },
                    "text": {
                        "type": "string",
                        "description": "text to type, key(s) to press, or modifiers held during a "
                        "click/scroll",
                    },
                    "scroll_direction": {"type": "string", "enum": list(SCROLL_BUTTONS)},
                    "scroll_amount": {"type": "integer", "minimum": 1},
                    "duration": {"type": "number", "description": "seconds (wait, hold_key)"},
                    "region": {
                        "type": "array",
                        "items": {"type": "number"},
                        "description": "zoom: [x0, y0, x1, y1]",
                    },
                },
                "required": ["action"],
            },
            native_type=version,
            native_params=params,
        )

    def __call__(self, action: str | None = None, **params) -> ToolResult:
        if self.stats is not None:
            self.stats.gui_steps += 1
        if action not in ACTIONS:
            raise ToolError(f"unknown action {action!r}; the actions are: {', '.join(ACTIONS)}.")
        known = {
            "coordinate",
            "start_coordinate",
            "text",
            "scroll_direction",
            "scroll_amount",
            "duration",
            "region",
        }
        unexpected = sorted(set(params) - known)
        if unexpected:
            raise ToolError(
                f"{action} does not take {', '.join(unexpected)}; it takes: "
                f"{', '.join(sorted(known))}."
            )
        params = {key: value for key, value in params.items() if value is not None}
        self.desktop.ensure_started()
        handler = getattr(self, f"_{action}", None) or self._click
        return handler(action, **params)

    # -- actions ---------------------------------------------------------------------------------
    def _shot(self, commands: list[list[str]]) -> ToolResult:
        return ToolResult(image_png=self.desktop.act(commands, self.scale.declared))

    def _move_to(self, params: dict, required: bool = False) -> list[list[str]]:
        if "coordinate" not in params:
            if required:
                raise ToolError("this action needs `coordinate` [x, y].")
            return []
        x, y = self.scale.to_screen(params["coordinate"])
        return [["mousemove", "--sync", str(x), str(y)]]

    def _modifiers(self, params: dict) -> list[str]:
        return key_combo(params["text"])[0].split("+") if params.get("text") else []

    def _screenshot(self, action, **params) -> ToolResult:
        return ToolResult(image_png=self.desktop.screenshot(self.scale.declared))

    def _click(self, action, **params) -> ToolResult:
        modifiers = self._modifiers(params)
        commands = self._move_to(params)
        if modifiers:
            commands.append(["keydown", *modifiers])
        commands.append(CLICKS[action])
        if modifiers:
            commands.append(["keyup", *reversed(modifiers)])
        return self._shot(commands)

    def _mouse_move(self, action, **params) -> ToolResult:
        return self._shot(self._move_to(params, required=True))

    def _left_click_drag(self, action, **params) -> ToolResult:
        start = []
        if "start_coordinate" in params:
            sx, sy = self.scale.to_screen(params["start_coordinate"], "start_coordinate")
            start = [["mousemove", "--sync", str(sx), str(sy)]]
        end = self._move_to(params, required=True)
        return self._shot([*start, ["mousedown", "1"], *end, ["mouseup", "1"]])

    def _left_mouse_down(self, action, **params) -> ToolResult:
        return self._shot([*self._move_to(params), ["mousedown", "1"]])

    def _left_mouse_up(self, action, **params) -> ToolResult:
        return self._shot([*self._move_to(params), ["mouseup", "1"]])

    def _type(self, action, **params) -> ToolResult:
        text = params.get("text")
        if not isinstance(text, str) or not text:
            raise ToolError("`type` needs `text`, the text to type.")
        chunks = [text[i : i + TYPE_CHUNK] for i in range(0, len(text), TYPE_CHUNK)]
        return self._shot([["type", "--delay", "12", "--", chunk] for chunk in chunks])

    def _key(self, action, **params) -> ToolResult:
        return self._shot([["key", "--", *key_combo(params.get("text"))]])

    def _hold_key(self, action, **params) -> ToolResult:
        keys = key_combo(params.get("text"))
        seconds = self._duration(params)
        return self._shot([["keydown", *keys], ["sleep", str(seconds)], ["keyup", *reversed(keys)]])

    def _scroll(self, action, **params) -> ToolResult:
        direction = params.get("scroll_direction")
        if direction not in SCROLL_BUTTONS:
            raise ToolError(f"`scroll_direction` must be one of: {', '.join(SCROLL_BUTTONS)}.")
        amount = params.get("scroll_amount", 3)
        if not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= 50:
            raise ToolError("`scroll_amount` must be a whole number of clicks from 1 to 50.")
        modifiers = self._modifiers(params)
        commands = self._move_to(params)
        if modifiers:
            commands.append(["keydown", *modifiers])
        commands.append(
            ["click", "--repeat", str(amount), "--delay", "10", SCROLL_BUTTONS[direction]]
        )
        if modifiers:
            commands.append(["keyup", *reversed(modifiers)])
        return self._shot(commands)

    def _wait(self, action, **params) -> ToolResult:
        return self._shot([["sleep", str(self._duration(params))]])

    def _zoom(self, action, **params) -> ToolResult:
        region = params.get("region")
        if not isinstance(region, (list, tuple)) or len(region) != 4:
            raise ToolError("`zoom` needs `region` [x0, y0, x1, y1] in screenshot coordinates.")
        x0, y0 = self.scale.to_screen(region[:2], "region")
        x1, y1 = self.scale.to_screen(
            [min(v, d - 1) for v, d in zip(region[2:], self.scale.declared, strict=True)], "region"
        )
        if x1 <= x0 or y1 <= y0:
            raise ToolError("`region` must have x1 > x0 and y1 > y0.")
        png, width, height = self.desktop.zoom((x0, y0, x1 + 1, y1 + 1), self.scale.declared)
        return ToolResult(
            output=f"zoomed to {list(region)}, shown at {width}x{height}", image_png=png
        )

    def _cursor_position(self, action, **params) -> ToolResult:
        x, y = self.scale.to_model(*self.desktop.cursor())
        return ToolResult(output=f"X={x}, Y={y}")

    @staticmethod
    def _duration(params: dict) -> float:
        seconds = params.get("duration")
        if (
            not isinstance(seconds, (int, float))
            or isinstance(seconds, bool)
            or not 0 < seconds <= MAX_WAIT_S
        ):
            raise ToolError(
                f"`duration` must be a number of seconds above 0 and at most {MAX_WAIT_S:g}."
            )
        return float(seconds)
