"""OSWorld 2.0 through `stateact run`/`suite`: the stand-in checkout's task modules run phase by
phase on a real desktop sandbox, the agent a scripted model, the judges and the simulated user the
fake OpenAI-compatible server on 127.0.0.1. Scores, checkpoints and phases are the stand-in's own
verdicts (its `evaluate()`), as recorded in result.json, phase_results.json and the suite summary.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from tests.conftest import require_image
from tests.fakes import FakeOpenAIServer

STANDIN = Path(__file__).parents[2] / "osworld2_standin"
MULTIPHASE = STANDIN / "tasks" / "task_multiphase.py"
ASK_USER = STANDIN / "tasks" / "task_ask_user.py"


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


FINISH = {"tool_calls": [{"name": "finish", "input": {"summary": "done"}}]}
LOOK = [bash("ls ~"), bash("cat ~/report.txt || true")]
"""Steps the main agent's finish asks for before it (it refuses a finish after fewer than 3)."""


def _config(**extra):
    """The stand-in's run config; on the desktop image unless `image` says (the stand-in's tasks
    need a terminal only, and these tests run without the osworld2 image)."""
    from harness.apps.run_options import RunOptions, config_from_options

    options = RunOptions(
        model="script/x",
        preset="no-verify",  # the finish gate is StateAct's, not the benchmark's: off here
        osworld2=str(STANDIN),
        osworld2_data=str(STANDIN / "tasks"),
        judge_model="openai/judge-small",
        **{"image": "desktop", **extra},
    )
    config = config_from_options(options)
    config.sandbox.memory_mb = 2048
    return config


@pytest.fixture
def models(monkeypatch):
    """The fake server the bridge's judges and simulated user reach (through OPENAI_BASE_URL)."""

    @contextlib.contextmanager
    def serve(replies):
        with FakeOpenAIServer(replies) as server:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            yield server

    return serve


def test_options_map_onto_the_run_config_and_default_to_500_steps(tmp_path):
    from harness.apps.osworld2_options import osworld2_config
    from harness.apps.run_options import RunOptions, config_from_options
    from harness.kernel.core import StateActError

    config = _config()
    assert config.loop.max_turns == 500
    assert config.osworld2.checkout == STANDIN.resolve()
    assert config.osworld2.judge_model == "openai/judge-small"
    assert _config(max_turns=40).loop.max_turns == 40
    assert config_from_options(RunOptions(model="script/x")).loop.max_turns == 150
    with pytest.raises(StateActError, match="go with --osworld2"):
        osworld2_config(RunOptions(model="m", judge_model="openai/j"))
    with pytest.raises(StateActError, match="must be anthropic/NAME or openai/NAME"):
        osworld2_config(RunOptions(model="m", osworld2=str(tmp_path), user_model="gpt-4o"))


def test_revisions_are_recorded(tmp_path):
    from tasks.osworld2.revisions import DATA_NOTE, pinned_revisions

    data = tmp_path / "data"
    data.mkdir()
    (data / DATA_NOTE).write_text(
        json.dumps({"dataset": "xlangai/osworld_v2_tasks", "commit": "c0"})
    )
    snapshot = tmp_path / "datasets--xlangai--osworld_v2_tasks" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    repo = Path(__file__).resolve().parents[3]
    pinned = pinned_revisions(repo, data)
    assert len(pinned["checkout"]["commit"]) == 40 and pinned["data"]["commit"] == "c0"
    cached = pinned_revisions(tmp_path, snapshot)
    assert cached["checkout"] == {"commit": None, "dirty": None}
    assert cached["data"] == {"dataset": "xlangai/osworld_v2_tasks", "commit": "a" * 40}


def test_multiphase_score_of_unreached_phases():
    from tasks.osworld2.scoring import PhaseVerdict, task_score

    first, second = PhaseVerdict(phase=0, score=1.0), PhaseVerdict(phase=1, score=0.5)
    assert task_score([first, second], phases=2) == 0.5  # every phase judged: the last decides
    assert task_score([first], phases=2) == 0.5  # stopped after phase 0: partial, never full
    assert task_score([], phases=2) == 0.0


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_oracle_and_do_nothing_through_every_phase(tmp_path, models):
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.models.scripted import ScriptedModel

    oracle = ScriptedModel(
        [bash("echo alpha > ~/report.txt"), *LOOK, FINISH]
        + [bash("echo beta >> ~/report.txt"), *LOOK, FINISH]
    )
    with models([{"text": "yes"}]) as judge:
        done = run_osworld2_task(MULTIPHASE, _config(), tmp_path / "oracle", model=oracle)
    assert judge.completion_requests()[0]["json"]["model"] == "judge-small"
    assert (done["status"], done["score"], done["success"]) == ("completed", 1.0, True)
    assert done["partial_score"] == 1.0 and done["phases_judged"] == 2
    first, second = done["phase_results"]
    assert [c["score"] for c in first["checkpoints"]] == [1.0, 1.0]
    assert [c["weight"] for c in first["checkpoints"]] == [3, 1]
    assert first["judges"][0]["answer"] == "yes" and second["score"] == 1.0
    assert [m["phase"] for m in done["metrics"]] == [0, 0, 1]
    phases = json.loads((tmp_path / "oracle" / "phase_results.json").read_text())
    assert [p["score"] for p in phases] == [1.0, 1.0]
    config = json.loads((tmp_path / "oracle" / "config.json").read_text())
    assert config["osworld2"]["judge_model"] == "openai/judge-small"
    assert len(config["osworld2_revisions"]["checkout"]["commit"]) == 40  # the stand-in's repo
    assert "sk-test" not in (tmp_path / "oracle" / "config.json").read_text()

    idle = ScriptedModel([bash("true"), *LOOK, FINISH] * 2)
    with models([{"text": "no"}]):
        nothing = run_osworld2_task(MULTIPHASE, _config(), tmp_path / "idle", model=idle)
    assert (nothing["status"], nothing["score"], nothing["success"]) == ("completed", 0.0, False)
    assert [p["score"] for p in nothing["phase_results"]] == [0.0, 0.0]


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_ask_user_reaches_the_scripted_user_and_failing_judge_is_an_error(tmp_path, models):
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.models.scripted import ScriptedModel

    def write_what_the_user_said(system, messages, tools):
        heard = "Teal, please." in json.dumps(messages)
        return bash(f"echo {'teal' if heard else 'unknown'} > ~/colour.txt")

    asker = ScriptedModel(
        [
            {"tool_calls": [{"name": "ask_user", "input": {"question": "Which colour?"}}]},
            write_what_the_user_said,
            *LOOK,
            FINISH,
        ]
    )
    with models([{"text": "Teal, please."}]) as user:
        asked = run_osworld2_task(
            ASK_USER, _config(user_model="openai/user-sim"), tmp_path / "a", model=asker
        )
    assert user.completion_requests()[0]["json"]["model"] == "user-sim"
    assert user.completion_requests()[0]["json"]["messages"][-1]["content"] == "Which colour?"
    assert (asked["status"], asked["score"]) == ("completed", 1.0)
    # the tab the benchmark opened over CDP from the host at setup, and found there at judging
    checkpoints = asked["phase_results"][0]["checkpoints"]
    assert [(c["name"], c["score"]) for c in checkpoints] == [
        ("colour written", 1.0),
        ("palette open", 1.0),
    ]
    events = [json.loads(line) for line in (tmp_path / "a" / "trajectory.jsonl").open()]
    assert [e["answer"] for e in events if e["event"] == "ask_user"] == ["Teal, please."]

    # the multiphase task's judge answers 500: an evaluation error, never the agent's 0.75
    failing = ScriptedModel([bash("echo alpha > ~/report.txt"), *LOOK, FINISH])
    with models([{"status": 500, "message": "judge down"}]):
        broken = run_osworld2_task(
            MULTIPHASE, _config(max_turns=4), tmp_path / "judge-down", model=failing
        )
    assert broken["status"] == "evaluation_error" and broken["score"] is None
    assert "judge call failed" in broken["error"] and "500" in broken["error"]
    assert broken["phase_results"][0]["score"] == 0.75  # what the stand-in itself computed


def _script(tmp_path: Path, turns: list[dict]) -> str:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(turns))
    return f"script/{path}"


def test_dry_run_with_nothing_configured_names_each_blocker_once():
    from tests.conftest import stateact

    done = stateact("suite", "--dry-run", "--osworld2", "/nonexistent/OSWorld-V2")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line)["blocker"] for line in done.stdout.splitlines()]
    assert [line.split(": ", 1)[1].split(" (")[0] for line in lines] == [
        "/nonexistent/OSWorld-V2 is not an OSWorld-V2 checkout",
        "no OSWorld 2.0 task data is given",
        "the mock websites and GitLab are not running",
        "no judge model is given",
    ]
    assert "Traceback" not in done.stderr


def test_dry_run_lists_the_data_with_each_tasks_blockers():
    from tests.conftest import stateact

    args = ["--osworld2", str(STANDIN), "--osworld2-data", str(STANDIN / "tasks")]
    ready = stateact(
        "suite", "--dry-run", *args, "--judge-model", "openai/j", env={"WEBSITE_HOST_SUFFIX": "t"}
    )
    records = [json.loads(line) for line in ready.stdout.splitlines()]
    assert [(r["id"], r["phases"], r["has_user"], r["runnable"]) for r in records] == [
        ("task_ask_user", 1, True, True),
        ("task_inline", 1, False, True),
        ("task_multiphase", 2, False, True),
        ("task_resume", 2, False, True),
        ("task_site_state", 1, False, True),
        ("task_website", 1, False, True),
    ]
    bare = stateact("suite", "--dry-run", *args, "--image", "base")
    reasons = json.loads(bare.stdout.splitlines()[0])["reasons"]
    assert "OSWorld 2.0: no judge model is given (--judge-model PROVIDER/NAME)" in reasons
    assert "application missing from the image base: terminal" in reasons


def test_bad_osworld2_inputs_are_one_sentence(tmp_path):
    from tests.conftest import stateact

    cases = [
        (["run", str(MULTIPHASE), "--model", "script/x.json"], "add --osworld2 PATH"),
        (["suite", "--model", "script/x.json"], "give task files or folders"),
        (["suite", "--judge-model", "openai/j", "--model", "script/x.json", "x"], "go with"),
        (
            ["suite", "--osworld2", str(tmp_path), "--model", "script/x.json"],
            "no OSWorld 2.0 task modules to run",
        ),
        (
            [
                "osworld2",
                "fetch",
                "tasks",
                "--out",
                str(tmp_path),
                "--revision",
                "r",
                "--token-file",
                str(tmp_path / "none"),
            ],
            "cannot read --token-file",
        ),
    ]
    for argv, sentence in cases:
        done = stateact(*argv, env={"HF_TOKEN": ""})
        assert done.returncode == 2, (argv, done.stderr)
        assert sentence in done.stderr and "Traceback" not in done.stderr, done.stderr
    home = tmp_path / "home"
    home.mkdir()
    done = stateact(
        "osworld2",
        "fetch",
        "tasks",
        "--out",
        str(tmp_path / "d"),
        "--revision",
        "r",
        env={"HF_TOKEN": "", "HF_HOME": str(home)},
    )
    assert done.returncode == 2 and "no Hugging Face token" in done.stderr, done.stderr
    assert not (tmp_path / "d").exists()  # nothing downloaded, nothing made


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_suite_and_run_commands_score_the_standin(tmp_path, models):
    require_image("desktop")
    from tests.conftest import stateact

    turns = [bash("echo alpha > ~/report.txt"), *LOOK, FINISH]
    turns += [bash("echo beta >> ~/report.txt"), *LOOK, FINISH]
    common = [
        "--osworld2",
        str(STANDIN),
        "--osworld2-data",
        str(STANDIN / "tasks"),
        "--judge-model",
        "openai/judge-small",
        "--model",
        _script(tmp_path, turns),
        "--preset",
        "no-verify",
        "--image",
        "desktop",
    ]
    with models([{"text": "yes"}, {"text": "yes"}]) as judge:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": judge.base_url}
        out = tmp_path / "suite"
        suite = stateact("suite", *common, "--filter", "multiphase", "--out", str(out), env=env)
        assert suite.returncode == 0, suite.stderr
        single = stateact("run", str(MULTIPHASE), *common, "--out", str(tmp_path / "one"), env=env)
    assert single.returncode == 0, single.stderr
    line = json.loads(single.stdout.splitlines()[-1])
    assert (line["score"], line["partial_score"], line["phases_judged"]) == (1.0, 1.0, 2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["osworld2"] == {
        "tasks": 1,
        "binary_accuracy": 1.0,
        "mean_partial_score": 1.0,
        "evaluation_errors": 0,
        "phases": 2,
        "phases_judged": 2,
    }
    (row,) = [json.loads(text) for text in (out / "results.jsonl").open()]
    assert row["task_id"] == "task_multiphase" and len(row["phase_results"]) == 2
    config = json.loads((out / "runs" / "task_multiphase" / "config.json").read_text())
    assert config["loop"]["max_turns"] == 500


def test_host_network_and_best_of_are_refused_before_any_sandbox(tmp_path):
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.kernel.core import StateActError

    shared = _config(network=True)
    with pytest.raises(StateActError, match="--network-mode host"):
        run_osworld2_task(MULTIPHASE, shared, tmp_path / "host")
    with pytest.raises(StateActError, match="--best-of"):
        run_osworld2_task(MULTIPHASE, _config(best_of=2), tmp_path / "best")
    assert not (tmp_path / "host").exists() and not (tmp_path / "best").exists()


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_the_screenshot_baseline_may_ask_the_user_too(tmp_path, models):
    """The paper's baseline (`--control screenshot`) gets ask_user beside its computer tool; it
    writes nothing, so the stand-in gives the colour checkpoint 0 and the open tab 1."""
    require_image("desktop")
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.models.scripted import ScriptedModel

    look = {"tool_calls": [{"name": "computer", "input": {"action": "screenshot"}}]}
    ask = {"tool_calls": [{"name": "ask_user", "input": {"question": "Which colour?"}}]}
    baseline = ScriptedModel([ask, look, look, FINISH])
    with models([{"text": "Teal, please."}]):
        result = run_osworld2_task(
            ASK_USER, _config(control="screenshot"), tmp_path / "baseline", model=baseline
        )
    assert (result["status"], result["score"], result["control"]) == (
        "completed",
        0.5,
        "screenshot",
    )
    events = [json.loads(line) for line in (tmp_path / "baseline" / "trajectory.jsonl").open()]
    assert [e["answer"] for e in events if e["event"] == "ask_user"] == ["Teal, please."]


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_run_stopped_after_a_phase_resumes_with_its_verdicts(tmp_path, models):
    """Killed during phase 1 (no result): the next run starts from the snapshot taken after phase
    0 was judged, keeps that verdict, sets up and judges phase 1 only, and cleans its snapshot."""
    require_image("desktop")
    from harness.apps.osworld2_resume import phase_checkpoint
    from harness.apps.osworld2_run import run_osworld2_task
    from harness.control.milestones import snapshot_of
    from harness.models.scripted import ScriptedModel
    from sandboxes import snapshot_exists

    def killed(system, messages, tools):
        raise KeyboardInterrupt  # as a Ctrl-C or kill between turns: no result.json

    first = ScriptedModel([bash("echo alpha > ~/report.txt"), *LOOK, FINISH, killed])
    out = tmp_path / "run"
    with models([{"text": "yes"}]):
        with pytest.raises(KeyboardInterrupt):
            run_osworld2_task(MULTIPHASE, _config(), out, model=first)
    checkpoint = phase_checkpoint(out)
    assert not (out / "result.json").exists() and checkpoint["osworld2_phase"] == 0
    assert checkpoint["verdicts"][0]["score"] == 1.0
    second = ScriptedModel([bash("echo beta >> ~/report.txt"), *LOOK, FINISH])
    with models([]) as judge:  # phase 1 has no judge checkpoint: nothing is asked again
        result = run_osworld2_task(MULTIPHASE, _config(), out, model=second)
    assert judge.completion_requests() == []
    assert (result["status"], result["score"], result["phases_judged"]) == ("completed", 1.0, 2), (
        result["error"]
    )
    assert [p["phase"] for p in result["phase_results"]] == [0, 1]
    events = [json.loads(line) for line in (out / "trajectory.jsonl").open()]
    resumed = [e for e in events if e["event"] == "resumed" and "after_phase" in e]
    assert [(e["after_phase"], e["phase"]) for e in resumed] == [(0, 1)]
    assert not snapshot_exists(snapshot_of(checkpoint))  # discarded with the result
