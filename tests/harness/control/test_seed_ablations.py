"""The seed modes' ablations as two-arm runs: each switch changes what the mode does (the same
scripted model, a real bubblewrap sandbox), lands in `result.json` `options` and splits
`summary.json` `by_option`; bad switch names are one sentence and exit 2."""

from __future__ import annotations

import json

import pytest

from harness.apps.run_options import config_from_options, validate_options
from harness.cli import main
from harness.kernel.core import StateActError
from harness.reports.summary import summarize
from harness.run.config import RunConfig
from harness.runner import run_task
from tests.fakes import FakeOpenAIServer
from tests.harness.control.test_control_lstc import LOOK, commit, report_task


def _events(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()]


def _lstc_arm(tmp_path, name: str, apps=(), **lstc) -> tuple[dict, list[dict], list[str]]:
    """Look twice under a kept subgoal, propose a third identical look, then give up."""
    responses = [
        commit("Find where the report goes", LOOK),
        commit("Check the folder again", LOOK),
        commit("continue", LOOK),
        commit("Stop", [{"tool": "infeasible", "input": "scripted end"}]),
    ]
    with FakeOpenAIServer(responses) as server:
        config = RunConfig(model="openai/qwen3-9b", control="lstc")
        config.model_options.base_url, config.model_options.api_key = server.base_url, "test-key"
        config.sandbox.backend = "local"
        config.lstc.abstraction = "lines"
        config.stall.enabled = lstc.pop("stall", True)
        for key, value in lstc.items():
            setattr(config.lstc, key, value)
        out = tmp_path / name
        task = report_task(tmp_path, name).model_copy(update={"related_apps": list(apps)})
        result = run_task(task, config, out, resume=False)
        sent = [json.dumps(r["json"]["messages"]) for r in server.completion_requests()]
    return result, _events(out), sent


def test_lstc_suppression_and_s2l_ablations_change_the_run(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    full, events, full_sent = _lstc_arm(tmp_path, "full")
    looks = [e for e in events if e["event"] == "lstc_action" and e["input"] == "ls /home/user"]
    assert len(looks) == 2 and any(e["event"] == "lstc_suppressed" for e in events)
    steps = [e["state"]["subgoal"] for e in events if e["event"] == "lstc_step"]
    assert steps[:2] == ["Find where the report goes"] * 2  # the no-effect proposal was not adopted

    loose, events, _ = _lstc_arm(tmp_path, "no-suppression", suppression=False)
    looks = [e for e in events if e["event"] == "lstc_action" and e["input"] == "ls /home/user"]
    assert len(looks) == 3 and not any(e["event"] == "lstc_suppressed" for e in events)
    # without pre-execution suppression the repeat is caught only after it ran
    assert [e["kind"] for e in events if e["event"] == "stall"] == ["repeat"]

    eager, events, _ = _lstc_arm(tmp_path, "no-s2l", s2l=False)
    steps = [e["state"]["subgoal"] for e in events if e["event"] == "lstc_step"]
    assert steps[:2] == ["Find where the report goes", "Check the folder again"]

    short, _, sent = _lstc_arm(tmp_path, "no-l2s", l2s=False)
    assert "SUBGOAL:" in full_sent[1] and "SUBGOAL:" not in sent[1]
    assert "LAST STEP:" in sent[1]

    results = [full, loose, eager, short]
    assert [r["options"]["lstc_suppression"] for r in results] == [True, False, True, True]
    summary = summarize(results)
    assert summary["by_option"]["lstc_suppression"]["false"]["tasks"] == 1
    assert summary["by_option"]["lstc_s2l"] == {
        "false": summarize([eager])["by_mode"]["full/lstc"],
        "true": summarize([full, loose, short])["by_mode"]["full/lstc"],
    }
    assert summary["by_option"]["lstc_l2s"]["false"]["tasks"] == 1


def test_stall_disabled_is_honoured_by_lstc(tmp_path, local_sandbox):
    del local_sandbox
    watched, events, _ = _lstc_arm(tmp_path, "stall-on", suppression=False)
    assert [e["kind"] for e in events if e["event"] == "stall"] == ["repeat"]
    unwatched, events, _ = _lstc_arm(tmp_path, "stall-off", suppression=False, stall=False)
    assert not any(e["event"] == "stall" for e in events)
    assert [r["options"]["stall"] for r in (watched, unwatched)] == [True, False]
    assert summarize([watched, unwatched])["by_option"]["stall"]["false"]["tasks"] == 1


def test_the_seed_flags_reach_the_recorded_options(tmp_path, local_sandbox):
    del local_sandbox
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "flags", "instruction": "Do nothing."}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "infeasible", "input": {}}]}]))
    flags = [
        "--no-stall",
        "--andor-grain",
        "op",
        "--andor-repair",
        "off",
        "--andor-or",
        "off",
        "--lstc-without",
        "refinement",
        "--lstc-without",
        "final-verification",
        "--lstc-without",
        "abstraction",
        "--structagent-without",
        "bbon",
    ]
    out = tmp_path / "run"
    argv = [
        "run",
        str(task),
        "--model",
        f"script/{script}",
        "--sandbox",
        "local",
        "--out",
        str(out),
    ]
    main([*argv, *flags])
    options = json.loads((out / "result.json").read_text())["options"]
    assert options["stall"] is False and options["andor_grain"] == "op"
    assert options["andor_repair"] is False and options["andor_or"] is False
    assert options["lstc_refinement"] is False and options["lstc_final_verification"] is False
    assert options["lstc_abstraction"] == "lines" and options["structagent_judge"] is False
    config = json.loads((out / "config.json").read_text())
    assert config["andor"]["grain"] == "op" and config["lstc"]["refinement"] is False


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--lstc-without", "brains"], "--lstc-without 'brains' is not a mechanism"),
        (["--andor-or", "maybe"], "invalid choice"),
        (["--andor-grain", "atom"], "invalid choice"),
    ],
)
def test_bad_seed_switches_are_one_sentence_and_exit_2(tmp_path, capsys, argv, message):
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"id": "t", "instruction": "x"}))
    with pytest.raises(SystemExit) if "invalid" in message else _nothing():
        code = main(
            ["run", str(task), "--model", "script/x.json", "--out", str(tmp_path / "o"), *argv]
        )
        assert code == 2
    assert message in capsys.readouterr().err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_run_configs_and_the_api_take_the_seed_switches():
    values = {"model": "script/x", "lstc_without": ["s2l"], "andor_or": "off", "no_stall": True}
    config = config_from_options(validate_options("run", values))
    assert config.lstc.s2l is False and config.andor.alternatives is False
    assert config.stall.enabled is False and config.options()["lstc_s2l"] is False
    with pytest.raises(StateActError, match="--andor-or"):
        config_from_options(validate_options("run", {"model": "script/x", "andor_or": "maybe"}))


def test_the_planner_sees_the_domain_notes_of_the_tasks_apps(tmp_path, local_sandbox):
    del local_sandbox
    apps = ["libreoffice_calc", "../etc/passwd", "unknown_app"]
    _, _, sent = _lstc_arm(tmp_path, "domains", apps=apps)
    assert "DOMAIN NOTES:" in sent[0] and "LibreOffice Calc: a workbook edited" in sent[0]
    _, _, short = _lstc_arm(tmp_path, "domains-no-l2s", apps=apps, l2s=False)
    assert "DOMAIN NOTES" not in short[0]
    _, _, plain = _lstc_arm(tmp_path, "no-apps")
    assert "DOMAIN NOTES" not in plain[0]


ARMS = [
    ("stall", {"no_stall": True}, "true", "false"),
    ("andor_grain", {"andor_grain": "op"}, "subtask", "op"),
    ("andor_repair", {"andor_repair": "off"}, "true", "false"),
    ("andor_or", {"andor_or": "off"}, "true", "false"),
    ("lstc_l2s", {"lstc_without": ["l2s"]}, "true", "false"),
    ("lstc_s2l", {"lstc_without": ["s2l"]}, "true", "false"),
    ("lstc_suppression", {"lstc_without": ["suppression"]}, "true", "false"),
    ("lstc_abstraction", {"lstc_without": ["abstraction"]}, "model", "lines"),
    ("lstc_refinement", {"lstc_without": ["refinement"]}, "true", "false"),
    ("lstc_final_verification", {"lstc_without": ["final-verification"]}, "true", "false"),
    ("structagent_verifier", {"structagent_without": ["verifier"]}, "structured", "off"),
    ("structagent_verifier", {"structagent_verifier": "visual"}, "structured", "visual"),
    ("structagent_memory", {"structagent_without": ["memory"]}, "true", "false"),
    ("structagent_judge", {"structagent_without": ["bbon"]}, "true", "false"),
    ("structagent_step_verifier", {"structagent_step_verifier": "off"}, "true", "false"),
    ("structagent_auditor", {"structagent_without": ["auditor"]}, "true", "false"),
]


@pytest.mark.parametrize("name, switch, full, ablated", ARMS)
def test_every_ablation_splits_a_two_arm_summary(name, switch, full, ablated):
    """Each switch, set as a run option, is recorded and groups the summary's `by_option`."""
    arms = []
    for values in ({}, switch):
        config = config_from_options(validate_options("run", {"model": "script/x", **values}))
        arms.append({"task_id": "t", "status": "completed", "options": config.options()})
    table = summarize(arms)["by_option"][name]
    assert set(table) == {full, ablated} and all(g["tasks"] == 1 for g in table.values())
