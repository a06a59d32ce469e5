"""VLC metrics as OSWorld's: full screen, and its preferences in vlcrc, where the last line
holding `key=` gives the value (VLC writes every option, commented out at its default, so a
commented line counts too), else VLC's default. A vlcrc VLC never wrote scores 0.
"""

from __future__ import annotations

from typing import Any

from harness.kernel.core import StateActError
from tasks.metrics.general import read_text, rule_value
from tasks.metrics.registry import metric

# metric name → (vlcrc key, the rule's key, VLC's default)
SETTINGS = {
    "check_qt_bgcone": ("qt-bgcone", "expected_qt_bgcone", "1"),
    "check_qt_max_volume": ("qt-max-volume", "expected_qt_max_volume", "125"),
    "check_qt_minimal_view": ("qt-minimal-view", "expected_qt_minimal_view", "0"),
    "check_play_and_exit": ("play-and-exit", "expected_play_and_exit", "0"),
    "check_one_instance_when_started_from_file": (
        "one-instance-when-started-from-file",
        "expected_one_instance_when_started_from_file",
        "1",
    ),
}
SLIDER_DEFAULT = "153;210;153;20;210;20;255;199;15;245;39;29"
BLACKISH_BELOW = 100


def last_value(text: str, marker: str, default: str) -> str:
    """The text after the last `=` of the last line containing `marker`, stripped."""
    value = default
    for line in text.split("\n"):
        if marker in line:
            value = line.split("=")[-1].strip()
    return value


def expected_text(rules: Any, key: str) -> str:
    expected = rule_value(rules, key)
    return str(expected) if isinstance(expected, int) else expected


def setting_metric(name: str, key: str, rule_key: str, default: str) -> None:
    def check(result: str | None, rules: dict, **_: Any) -> float:
        expected = expected_text(rules, rule_key)
        text = read_text(result)
        if text is None:
            return 0.0
        return float(last_value(text, f"{key}=", default) == expected)

    check.__doc__ = f"vlcrc's {key} (default {default}) equals the rule's {rule_key}."
    metric(name)(check)


for _name, (_key, _rule_key, _default) in SETTINGS.items():
    setting_metric(_name, _key, _rule_key, _default)


@metric("check_global_key_play_pause")
def check_global_key_play_pause(result: str | None, rules: dict, **_: Any) -> float:
    """A global play/pause hot key is set (1) or not (0), as the rule expects."""
    expected = expected_text(rules, "expected_global_key_play_pause")
    text = read_text(result)
    if text is None:
        return 0.0
    value = "0"
    for line in text.split("\n"):
        if "global-key-play-pause=" in line:
            value = "0" if line.split("=")[-1].strip() == "" else "1"
    return float(value == expected)


@metric("check_qt_slider_colours")
def check_qt_slider_colours(result: str | None, rules: dict, **_: Any) -> float:
    """The volume slider's colours equal the rule's (`match`) or are all dark (`blackish`)."""
    kind = rules.get("type") if isinstance(rules, dict) else None
    if kind not in ("match", "blackish"):
        raise StateActError("check_qt_slider_colours needs a rule of type 'match' or 'blackish'")
    text = read_text(result)
    if text is None:
        return 0.0
    colours = last_value(text, "qt-slider-colours", SLIDER_DEFAULT)
    if kind == "match":
        return float(colours == rule_value(rules, "expected_qt_slider_colours"))
    try:
        values = [int(part) for part in colours.split(";")]
    except ValueError:
        return 0.0  # OSWorld's parse error scores 0
    triples = zip(values[0::3], values[1::3], values[2::3], strict=False)
    return float(all(all(v < BLACKISH_BELOW for v in rgb) for rgb in triples))


@metric("is_vlc_recordings_folder")
def is_vlc_recordings_folder(result: str | None, rules: dict, **_: Any) -> float:
    """The first uncommented line naming input-record-path holds the rule's folder."""
    expected = rule_value(rules, "recording_file_path")
    text = read_text(result)
    if text is None:
        return 0.0
    for line in text.split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return float(line.split("=")[-1].strip() == expected)
    return 0.0


@metric("is_vlc_fullscreen")
def is_vlc_fullscreen(result: Any, expected: Any, **_: Any) -> float:
    """The window's size equals the screen's (either missing scores 0)."""
    if result is None or expected is None:
        return 0.0
    same = result["width"] == expected["width"] and result["height"] == expected["height"]
    return float(same)
