"""Run configs (`--config FILE`, `-c key=value`): one pydantic model per command validates them for
the command line and for harness.api alike; unknown keys are refused by name."""

from __future__ import annotations

import argparse
import json

import pytest

from harness import api
from harness.apps.run_options import MODELS
from harness.cli import build_parser, parse
from harness.cli.run import build_config
from harness.kernel.core import StateActError
from tests.conftest import stateact
from tests.harness.apps.test_suite_runner import file_task, write_task


def test_every_option_of_each_command_is_a_key_of_its_model():
    """The models cannot drift from the parsers: a new flag needs its key, and no key is dead."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, model in MODELS.items():
        dests = {
            a.dest
            for a in sub.choices[command]._actions
            if a.option_strings and a.dest not in ("help", "config", "set")
        }
        assert dests == set(model.model_fields), command


def test_flags_beat_c_overrides_which_beat_the_file(tmp_path):
    config = tmp_path / "lh.yaml"
    config.write_text("model: openai/gpt-4o\nmax-turns: 60\nnetwork: true\nprice_in: 1.5\n")
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"id": "t", "instruction": "x"}))
    args = parse(["run", str(task), "--config", str(config)])
    built = build_config(args)
    assert (built.model, built.loop.max_turns, built.sandbox.network) == ("openai/gpt-4o", 60, True)
    assert built.model_options.prices == {"input": 1.5}
    args = parse(["run", str(task), "--config", str(config), "-c", "max_turns=70"])
    assert build_config(args).loop.max_turns == 70
    args = parse(
        ["run", str(task), "--config", str(config), "-c", "max_turns=70", "--max-turns", "80"]
    )
    assert build_config(args).loop.max_turns == 80
    toml = tmp_path / "lh.toml"
    toml.write_text('model = "script/x.json"\nmax_cost = 0.25\n')
    assert build_config(parse(["run", str(task), "--config", str(toml)])).loop.max_cost_usd == 0.25


def test_an_unknown_key_exits_2_naming_it(tmp_path):
    suite = tmp_path / "suite"
    write_task(suite, file_task("t-os-001", "hello"))
    config = tmp_path / "bad.yaml"
    config.write_text("model: script/oracle\nmax_turn: 60\nparalel: 2\n")
    done = stateact("suite", str(suite), "--config", str(config), "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert "unknown key(s) 'max_turn', 'paralel'" in done.stderr and str(config) in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()
    override = stateact("suite", str(suite), "--model", "script/oracle", "-c", "nosuch=1")
    assert override.returncode == 2 and "'nosuch'" in override.stderr
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('model = "script/oracle"\nmax_turns = "lots"\n')
    typed = stateact("suite", str(suite), "--config", str(wrong))
    assert typed.returncode == 2 and "max_turns" in typed.stderr, typed.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("model: [unclosed\n")
    unparsable = stateact("suite", str(suite), "--config", str(broken))
    assert unparsable.returncode == 2 and "does not parse" in unparsable.stderr


def test_the_same_config_through_the_python_api_raises_stateacterror(tmp_path):
    suite = tmp_path / "suite"
    task = write_task(suite, file_task("t-os-001", "hello"))
    config = tmp_path / "bad.yaml"
    config.write_text("model: script/oracle\nmax_turn: 60\n")
    with pytest.raises(StateActError, match=r"unknown key\(s\) 'max_turn'"):
        api.run_suite([suite], out_dir=tmp_path / "o", config_file=config)
    with pytest.raises(StateActError, match=r"unknown key\(s\) 'max_turn'"):
        api.run_task(task, out_dir=tmp_path / "r", config_file=config)
    with pytest.raises(StateActError, match=r"unknown key\(s\) 'gpu'"):
        api.run_suite([suite], "script/oracle", out_dir=tmp_path / "o", options={"gpu": 1})
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()


def test_a_bad_model_spec_raises_before_any_run_folder(tmp_path):
    """docs/python-api.md: bad input raises StateActError (it used to return `error` rows)."""
    suite = tmp_path / "suite"
    write_task(suite, file_task("t-os-001", "hello"))
    with pytest.raises(StateActError, match="invalid model spec 'nonsense'"):
        api.run_suite([suite], "nonsense", out_dir=tmp_path / "o")
    with pytest.raises(StateActError, match="script file"):
        api.run_batch(
            "x {file}",
            [str(suite / "tasks" / "t-os-001.json")],
            "script/nope.json",
            out_dir=tmp_path / "b",
        )
    assert not (tmp_path / "o").exists() and not (tmp_path / "b").exists()
