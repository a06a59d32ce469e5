"""Which native tool versions a Claude model takes, by its name alone.

Kept apart from `anthropic_model.py` so that what needs only these answers (the GUI specialist's
tool choice) does not import the `anthropic` SDK, whose import costs seconds at every CLI start."""

from __future__ import annotations

from harness.models.pricing import parse_claude_name

COMPUTER_TOOLSET = "computer_toolset_20260801"


def computer_tool_version(model_name: str) -> str:
    """The computer tool type that `model_name` understands (`computer_20250124` if unknown)."""
    parsed = parse_claude_name(model_name)
    if parsed is None:
        return "computer_20250124"
    family, major, minor = parsed
    if (major, minor) >= (4, 8):
        return COMPUTER_TOOLSET
    if (major, minor) >= (4, 6) or (family == "opus" and (major, minor) >= (4, 5)):
        return "computer_20251124"
    return "computer_20250124"


def supports_native_tools(model_name: str) -> bool:
    """Whether the model takes `bash_20250124` and `text_editor_20250728` (Claude 4 and later)."""
    parsed = parse_claude_name(model_name)
    return parsed is not None and parsed[1] >= 4
