"""Bad input to the seed parts of the `andor` and `lstc` modes: grounder answers and specs, the
candidate table and OR scores, GUI actions without a GUI channel, and the `--grounder` options."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from harness.cli.run import add_run_options, build_config
from harness.control.andor.memory import CandidateTable, parse_observation
from harness.control.andor.parse import parse_expansion, parse_scores
from harness.control.lstc.controller import TOOLS, parse_commitment
from harness.control.lstc.gui import GUI_TOOLS, grounder_options, parse_point
from harness.kernel.core import StateActError, ToolError
from harness.models import ModelConfig
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("answer", "point"),
    [
        ("(412, 230)", (412, 230)),
        ("[12.5,7]", (12.5, 7)),
        ("x=3 y=4", (3, 4)),
        ("click 5 6", (5, 6)),
    ],
)
def test_grounder_points_are_read_from_common_answer_shapes(answer, point):
    assert parse_point(answer) == point


@pytest.mark.parametrize(
    ("answer", "coordinates", "point"),
    [
        ("(640, 400)", "pixels", (640, 400)),
        ("(500, 250)", "0-1000", (640, 200)),
        ("[0.5, 0.25]", "0-1", (640, 200)),
    ],
)
def test_grounder_points_on_other_scales_become_screenshot_pixels(answer, coordinates, point):
    assert parse_point(answer, (1280, 800), coordinates) == point


def test_a_point_outside_the_screenshot_names_the_coordinates_option():
    # A 0-1000 grounder read as pixels lands off an 800-pixel-high screen: say so, do not click.
    with pytest.raises(ToolError, match="outside the 1280x800 screenshot.*--grounder-coordinates"):
        parse_point("(500, 900)", (1280, 800))
    with pytest.raises(ToolError, match="outside"):
        parse_point("(-3, 10)", (1280, 800))


def test_a_grounder_answer_without_a_point_is_a_tool_error():
    with pytest.raises(ToolError, match="the grounder gave no point"):
        parse_point("I cannot see it")


def test_the_grounder_must_be_an_openai_compatible_endpoint():
    with pytest.raises(StateActError, match="OpenAI-compatible vision endpoint"):
        grounder_options("script/x.json", ModelConfig(), None)
    main = ModelConfig(base_url="http://127.0.0.1:1/v1", provider="openai")
    assert grounder_options("openai/g", main, None).base_url == "http://127.0.0.1:1/v1"
    assert grounder_options("openai/g", main, "http://127.0.0.1:2/v1").base_url.endswith(":2/v1")
    anthropic = ModelConfig(base_url="http://127.0.0.1:3", provider="anthropic")
    assert grounder_options("openai/g", anthropic, None).base_url is None  # not the other's URL


def test_gui_actions_need_the_gui_channel():
    answer = {"candidates": [{"subgoal": "s", "actions": [{"tool": "click", "input": "OK"}]}]}
    with pytest.raises(ValueError, match="one of bash, python, wait, done, infeasible"):
        parse_commitment(answer)
    assert parse_commitment(answer, tools=TOOLS + GUI_TOOLS)["actions"][0]["tool"] == "click"
    answer["candidates"][0]["actions"] = [{"tool": "type", "input": ""}]
    with pytest.raises(ValueError, match="needs `input`"):
        parse_commitment(answer, tools=TOOLS + GUI_TOOLS)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([], "expected"),
        ({"needed": 0}, "positive whole number"),
        ({"constraints": "cheap"}, "list of strings"),
        ({"candidates": [{"name": "Pen"}]}, "needs `verdict`"),
    ],
)
def test_observations_are_parsed_strictly(answer, message):
    with pytest.raises(ValueError, match=message):
        parse_observation(answer)


def test_the_candidate_table_counts_only_items_meeting_every_constraint():
    table = CandidateTable({})
    table.merge(
        parse_observation(
            {
                "constraints": ["< $10"],
                "needed": 2,
                "candidates": [
                    {"name": "Pen", "verdict": "meets"},
                    {"name": "Mug", "verdict": "unknown"},
                ],
            }
        )
    )
    assert "only 1 of the 2" in table.shortfall()
    table.merge(parse_observation({"candidates": [{"name": "mug", "verdict": "meets"}]}))
    assert table.shortfall() is None and table.memory["constraints"] == ["< $10"]
    table.merge(parse_observation({"candidates": [{"name": "Pen", "verdict": "unknown"}]}))
    assert [c["verdict"] for c in table.meeting()] == ["meets", "meets"]  # unknown never demotes


def test_or_scores_and_node_agents_are_checked():
    check = parse_scores(["1.1", "1.2"])
    assert check({"scores": {"1.1": 0.2, "1.2": 1}}) == {"1.1": 0.2, "1.2": 1.0}
    with pytest.raises(ValueError, match="missing: 1.2"):
        check({"scores": {"1.1": 0.2}})
    with pytest.raises(ValueError, match="from 0 to 1"):
        check({"scores": {"1.1": 2, "1.2": 0}})
    with pytest.raises(ValueError, match="`agent` must be one of worker, web, gui"):
        parse_expansion({"type": "and", "children": [{"goal": "x", "agent": "robot"}]})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grounder", "openai/g"], "add --control lstc"),
        (["--control", "lstc", "--grounder", "anthropic/claude"], "OpenAI-compatible"),
        (["--control", "lstc", "--grounder-base-url", "http://127.0.0.1:9/v1"], "need --grounder"),
        (["--control", "lstc", "--grounder-coordinates", "0-1"], "need --grounder"),
        (["--control", "lstc", "--grounder", "openai/g", "--grounder-coordinates", "km"], "choose"),
    ],
)
def test_bad_grounder_options_are_one_sentence_and_exit_2(tmp_path, extra, message):
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"id": "t", "instruction": "do it"}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(task),
            "--model",
            "openai/m",
            "--api-key",
            "k",
            "--sandbox",
            "local",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_the_grounder_options_reach_the_lstc_settings():
    parser = argparse.ArgumentParser()
    add_run_options(parser)
    args = parser.parse_args(
        [
            "--model",
            "openai/qwen",
            "--api-key",
            "k",
            "--control",
            "lstc",
            "--grounder",
            "openai/gta1-7b",
            "--grounder-base-url",
            "http://127.0.0.1:9/v1",
            "--grounder-coordinates",
            "0-1000",
        ]
    )
    config = build_config(args)
    assert config.lstc.grounder == "openai/gta1-7b" and config.lstc.grounder_coordinates == "0-1000"
    assert config.lstc.grounder_base_url == "http://127.0.0.1:9/v1"
    assert config.lstc.no_change_steps == 3 and config.lstc.repair_retries == 3
