"""OUT owned by one run: exit codes 0/1/2, the lock, the stored run configuration checked on
--resume, and --retry-errors (real sandboxes, the fake OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.apps.batch import BatchOptions, run_batch
from harness.apps.outdir import (
    OutLock,
    check_identity,
    exit_code,
    parse_fail_on_error,
    run_identity,
)
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from tests.conftest import REPO, require_image, stateact
from tests.fakes import FakeOpenAIServer
from tests.harness.apps.test_suite_runner import file_task, results_by_id, write_task


def solve_turns(text: str = "hello") -> list[dict]:
    """Four OpenAI replies that do a file_task: write, look, read back, finish."""

    def call(name: str, **params) -> dict:
        return {"tool_calls": [{"name": name, "input": params}]}

    return [
        call("bash", command=f"echo {text} > /home/user/out.txt"),
        call("bash", command="ls -la /home/user"),
        call("bash", command="cat /home/user/out.txt"),
        call("finish", summary="wrote the word"),
    ]


def suite_args(suite: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return [
        "suite",
        str(suite),
        "--model",
        "openai/gpt-4o",
        "--base-url",
        base_url,
        "--preset",
        "no-verify",
        "--image",
        "base",
        "--out",
        str(out),
        *extra,
    ]


# --- without Docker -------------------------------------------------------------------------------


def test_exit_codes_and_fail_on_error():
    ok = [{"status": "completed"}, {"status": "gate_rejected"}, {"status": "max_turns"}]
    bad = [*ok, {"status": "model_error"}]
    assert exit_code(ok) == 0  # scores do not matter, verdicts do
    assert exit_code(bad) == 1
    assert exit_code(bad, parse_fail_on_error("1")) == 0  # one error tolerated
    assert exit_code([*bad, {"status": "sandbox_error"}], parse_fail_on_error("1")) == 1
    assert exit_code(bad, parse_fail_on_error("0.3")) == 0  # 1/4 <= 0.3
    assert exit_code(bad, parse_fail_on_error("0.2")) == 1
    for wrong in ("many", "-1", "2.5"):
        with pytest.raises(StateActError, match="--fail-on-error"):
            parse_fail_on_error(wrong)


def test_a_second_lock_on_out_is_refused_naming_the_holder(tmp_path):
    with OutLock(tmp_path, "a suite"):
        with pytest.raises(StateActError, match=r"another run \(a suite, pid \d+"):
            with OutLock(tmp_path, "a batch"):
                pass
    with OutLock(tmp_path, "a batch"):  # released: the next run may take it
        pass


# --- real sandboxes -------------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_errors_exit_1_and_retry_errors_reruns_exactly_those(tmp_path):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    for name in ("t-os-001", "t-os-002", "t-os-003"):
        write_task(suite, file_task(name, "hello"))
    # The first task is answered; then the server answers 500 to every request (x-should-retry:
    # false, so the client gives up at once instead of backing off for a minute).
    with FakeOpenAIServer(solve_turns()) as server:
        first = stateact(*suite_args(suite, out, server.base_url))
    assert first.returncode == 1, first.stderr
    assert "2 of 3 task(s) ended in an error (model_error 2)" in first.stderr
    assert "--retry-errors" in first.stderr
    statuses = {k: v["status"] for k, v in results_by_id(out).items()}
    assert statuses == {
        "t-os-001": "completed",
        "t-os-002": "model_error",
        "t-os-003": "model_error",
    }

    with FakeOpenAIServer(solve_turns() + solve_turns()) as healthy:
        again = stateact(*suite_args(suite, out, healthy.base_url, "--resume", "--retry-errors"))
        served = healthy.served
    assert again.returncode == 0, again.stderr
    assert served == 8  # exactly the two errored tasks ran again, four turns each
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(x["task_id"], x["status"]) for x in lines] == [
        ("t-os-001", "completed"),
        ("t-os-002", "model_error"),
        ("t-os-003", "model_error"),
        ("t-os-002", "completed"),
        ("t-os-003", "completed"),
    ]  # the earlier attempts stay as history
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 3 and summary["successes"] == 3 and summary["errors"] == 0
    assert summary["retried"] == 2
    for name in ("t-os-002", "t-os-003"):
        kept = out / "history" / name / "attempt-1" / "result.json"
        assert json.loads(kept.read_text())["status"] == "model_error"


SLOW_SOLUTION = "sleep 15; echo hello > /home/user/out.txt\n"


@pytest.mark.docker
@pytest.mark.slow
def test_a_second_suite_into_the_same_out_is_refused_and_the_first_finishes(tmp_path):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    for name in ("t-os-001", "t-os-002"):
        write_task(suite, file_task(name, "hello"), SLOW_SOLUTION)
    argv = ["suite", str(suite), "--model", "script/oracle", "--image", "base", "--out", str(out)]
    first = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = out / ".stateact.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    started = time.monotonic()
    second = stateact(*argv, timeout=60)
    assert second.returncode == 2, second.stderr
    # Refused at once: the first run (two 15 s tasks) is still going. The bound is loose because
    # the interpreter alone takes several seconds to start on this loaded 2-core machine.
    assert first.poll() is None and time.monotonic() - started < 30
    assert f"pid {first.pid}" in second.stderr and "another run" in second.stderr
    assert "Traceback" not in second.stderr
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["task_id"] for x in lines) == ["t-os-001", "t-os-002"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tasks"] == 2 and summary["successes"] == 2

    script = tmp_path / "other.json"
    script.write_text(json.dumps([{"text": "a different model"}]))
    other = stateact(*argv[:3], f"script/{script}", *argv[4:], "--resume")
    assert other.returncode == 2, other.stderr
    assert f"model 'script/oracle' → 'script/{script}'" in other.stderr
    assert "--force" in other.stderr
    same = stateact(*argv, "--resume")  # the same configuration continues (nothing left to run)
    assert same.returncode == 0, same.stderr


def test_batch_out_is_locked_and_its_configuration_checked_on_resume(tmp_path):
    source = tmp_path / "notes.txt"
    source.write_text("x")
    out = tmp_path / "out"
    with OutLock(out, "a batch"):
        with pytest.raises(StateActError, match="another run"):
            run_batch("Fix {file}", [source], out, RunConfig(model="script/a.json"))
    check_identity(
        out, run_identity("script/a.json", "full", "stateact", [str(source)]), False, False
    )
    with pytest.raises(StateActError, match=r"model 'script/a.json' → 'script/b.json'"):
        run_batch(
            "Fix {file}", [source], out, RunConfig(model="script/b.json"), BatchOptions(resume=True)
        )
