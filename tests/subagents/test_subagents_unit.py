"""Subagent pieces that need no sandbox: scaling, key names, delegate's specialist list, report,
toolset echo."""

from __future__ import annotations

import pytest

from harness.kernel.core import Finished, ToolError, ToolResult, ToolSpec
from harness.kernel.loop import TOOLSET_NOT_RUN, ToolLoop
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.run.context import RunContext
from subagents import (
    DelegateTool,
    ReportTool,
    available_specialists,
    main_agent_extra_tools,
    screen_scale,
)
from subagents.gui import ComputerTool, image_limits, key_combo


def test_scale_follows_the_long_edge_and_pixel_budget():
    assert screen_scale(1280, 720, "script").declared == (1280, 720)  # 0.92 MP: no scaling
    big = screen_scale(1920, 1080, "claude-sonnet-4-5")
    # sqrt(1.15e6 / 2.07e6) = 0.7447 -> 1429x804, rounded down to 16:9 exactly (16 * 89, 9 * 89)
    assert big.declared == (1424, 801)
    assert big.declared[0] * big.declared[1] <= 1.15e6
    assert big.declared[0] / big.declared[1] == 1920 / 1080  # one factor for both axes
    wide = screen_scale(3000, 600, "gpt-5")
    assert wide.declared == (1565, 313)  # the long edge (1568) binds, then 5:1 exactly
    # 683x384 is the largest exact 1366:768 size, too small: the floored size stays
    assert screen_scale(1366, 768, "claude-sonnet-4-5").declared == (1366, 768)
    assert screen_scale(2732, 1536, "claude-sonnet-4-5").declared == (1430, 804)
    assert screen_scale(2560, 1440, "claude-opus-4-7").declared == (2560, 1440)  # 1:1 up to 2576 px
    assert image_limits("claude-opus-4-8") == (2576, None)


def test_model_coordinates_map_back_to_screen_pixels_and_refuse_off_screen():
    scale = screen_scale(1920, 1080, "claude-sonnet-4-5")
    x, y = scale.to_screen([712, 400])
    assert (x, y) == (960, 540)  # the middle of 1424x801 is the middle of 1920x1080
    # Every screenshot pixel maps to a screen pixel that maps back to it.
    width, height = scale.declared
    points = [(px, py) for px in range(width) for py in (0, 1, height // 2, height - 1)]
    assert all(scale.to_model(*scale.to_screen(list(p))) == p for p in points)
    assert scale.to_screen([width - 1, height - 1]) == (1919, 1079)
    for bad in ([1424, 10], [-1, 5], [10], "10,10", [True, 3]):
        with pytest.raises(ToolError):
            scale.to_screen(bad)


def test_key_names_become_keysyms():
    assert key_combo("ctrl+s") == ["ctrl+s"]
    assert key_combo("Enter ESC ctrl+Shift+t pagedown") == [
        "Return",
        "Escape",
        "ctrl+shift+t",
        "Page_Down",
    ]
    for bad in ("", "ctrl++", None, "   "):
        with pytest.raises(ToolError):
            key_combo(bad)


def test_computer_spec_is_native_for_claude_and_a_function_tool_otherwise():
    class FakeDesktop:
        requested_size = (1920, 1080)

    spec = ComputerTool(FakeDesktop(), "claude-sonnet-4-5").spec()
    assert spec.native_type == "computer_20250124"
    assert spec.native_params == {"display_width_px": 1424, "display_height_px": 801}
    assert "zoom" in spec.input_schema["properties"]["action"]["enum"]
    assert (
        ComputerTool(FakeDesktop(), "claude-opus-4-6").spec().native_params["enable_zoom"] is True
    )


def test_unknown_action_and_unexpected_params_are_tool_errors_before_touching_the_desktop():
    class NoDesktop:
        requested_size = (1280, 720)

        def ensure_started(self):
            raise AssertionError("must not start the desktop for bad input")

    tool = ComputerTool(NoDesktop(), "script")
    with pytest.raises(ToolError, match="unknown action 'fly'"):
        tool(action="fly")
    with pytest.raises(ToolError, match="does not take colour"):
        tool(action="left_click", colour="red")


def test_delegate_offers_only_enabled_specialists_and_names_them_on_a_bad_choice():
    config = RunConfig()
    model = ScriptedModel([])
    tool = DelegateTool(RunContext(config=config, model=model, sandbox=None))
    assert tool.spec().input_schema["properties"]["agent"]["enum"] == ["worker", "gui", "web"]
    with pytest.raises(ToolError, match="available ones are: worker, gui, web"):
        tool(agent="painter", task="x")
    no_act = RunConfig(preset="no-act")
    assert available_specialists(no_act) == ["worker", "web"]
    with pytest.raises(ToolError, match="no 'gui' specialist"):
        DelegateTool(RunContext(config=no_act, model=model, sandbox=None))(
            agent="gui", task="click it"
        )
    config.subagents.enabled = ["worker"]
    with pytest.raises(ToolError, match="available ones are: worker"):
        DelegateTool(RunContext(config=config, model=model, sandbox=None))(agent="web", task="x")


def test_no_act_gives_the_main_agent_the_computer_tool():
    model = ScriptedModel([], name="claude-sonnet-4-5")
    assert main_agent_extra_tools(RunContext(config=RunConfig(), model=model, sandbox=None)) == []
    tools = main_agent_extra_tools(
        RunContext(config=RunConfig(preset="no-act"), model=model, sandbox=None)
    )
    assert [tool.name for tool in tools] == ["computer"]
    # OSWorld's 1920x1080 screen, scaled to 16:9 within the model's image budget
    assert tools[0].spec().native_params == {"display_width_px": 1424, "display_height_px": 801}


def test_report_ends_only_with_text_and_respects_a_rejecting_review():
    with pytest.raises(ToolError):
        ReportTool()(text="  ")
    with pytest.raises(Finished) as ended:
        ReportTool()(text="done: B7 = 42")
    assert ended.value.status == "reported" and ended.value.message == "done: B7 = 42"
    rejected = ReportTool(review=lambda text: "gap: B7 is empty")(text="done")
    assert rejected.error == "gap: B7 is empty"


class _Failing:
    name = "computer"

    def __init__(self):
        self.calls = []

    def spec(self):
        return ToolSpec("computer", "", {"type": "object"})

    def __call__(self, action=None, **params):
        self.calls.append(action)
        if action == "bad":
            raise ToolError("bad action")
        return ToolResult(output=f"did {action}")


def test_toolset_results_echo_the_toolset_and_a_failed_batch_stops():
    tool = _Failing()
    loop = ToolLoop(ScriptedModel([]), [tool, ReportTool()], "")
    blocks = [
        {
            "type": "tool_use",
            "id": f"t{n}",
            "name": "computer",
            "input": {"action": action},
            "_toolset_name": "computer",
            "_member": action,
        }
        for n, action in enumerate(["screenshot", "bad", "left_click"])
    ]
    loop.model = type("M", (), {"complete": lambda *a: _reply(blocks), "name": "m"})()
    loop.step()
    results = loop.messages[-1]["content"]
    assert [r["_toolset_name"] for r in results] == ["computer"] * 3
    assert [r["is_error"] for r in results] == [False, True, True]
    assert results[2]["content"][0]["text"] == TOOLSET_NOT_RUN
    assert tool.calls == ["screenshot", "bad"]


def _reply(blocks):
    from harness.kernel.core import ModelReply, Usage

    return ModelReply(content=blocks, usage=Usage(), stop_reason="tool_use")
