"""The warm pool (`--warm N`, sandboxes/pool.py): tasks take started sandboxes, no file of one task
reaches another, a kill -9 of the suite leaves nothing after the next start, bad values are one
sentence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.apps.selection import Selection, SuiteOptions
from harness.apps.suite import run_suite
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from sandboxes import SandboxConfig
from sandboxes.pool import PoolConfig, WarmPool, open_pooled, warm_pool
from tests.conftest import REPO, listed_containers, require_image, stateact

TASKS = 4
MARKERS = "ls /home/user/marker-* /tmp/marker-* 2>/dev/null | tr '\\n' ' '; echo done"


def marker_task(suite: Path, number: int, setup: bool = False) -> None:
    """Task `number` leaves a marker in the home and in /tmp (with `setup`, its setup leaves one
    too); its checker passes only when the markers it sees are its own (none of another task's)."""
    task_id = f"pooled-{number}"
    others = [f"marker-{n}" for n in range(TASKS) if n != number]
    own = [f"marker-{number} ", "done"] + ([f"marker-{number}-setup"] if setup else [])
    task = {
        "id": task_id,
        "instruction": f"Write marker {number} to /home/user/marker-{number} and /tmp.",
        "config": [{"type": "execute", "parameters": {"command": f"touch ~/marker-{number}-setup"}}]
        if setup
        else [],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": MARKERS, "shell": True},
            "expected": {
                "type": "rule",
                "rules": {"include": own, "exclude": others},
            },
        },
    }
    (suite / "tasks").mkdir(parents=True, exist_ok=True)
    (suite / "solutions").mkdir(exist_ok=True)
    (suite / "tasks" / f"{task_id}.json").write_text(json.dumps(task))
    (suite / "solutions" / f"{task_id}.sh").write_text(
        f"echo {number} > /home/user/marker-{number}; echo {number} > /tmp/marker-{number}\n"
    )


# --- without Docker -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("warm", "backend", "message"),
    [
        (-1, "docker", "--warm must be from 0 (no pool) to 64, got -1."),
        (65, "docker", "--warm must be from 0 (no pool) to 64, got 65."),
        ("2", "docker", "--warm takes a whole number of sandboxes (0 for none), not '2'."),
        (True, "docker", "--warm takes a whole number"),
        (2, "local", "--warm needs the docker backend"),
    ],
)
def test_bad_pool_configs_are_refused_in_one_sentence(warm, backend, message):
    with pytest.raises(StateActError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        PoolConfig(warm, SandboxConfig(backend=backend))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["suite", "{tasks}", "--warm", "-1"], "--warm must be from 0 (no pool) to 64, got -1."),
        (["suite", "{tasks}", "--warm", "two"], "argument --warm: invalid int value: 'two'"),
        (["suite", "{tasks}", "--warm", "2", "--sandbox", "local"], "needs the docker backend"),
        (["suite", "{tasks}", "-c", "warm=-3"], "--warm must be from 0 (no pool) to 64, got -3."),
        (["suite", "{tasks}", "-c", "warm=1.5"], "warm: Input should be a valid integer"),
        (["suite", "{tasks}", "--warm", "1", "--ray", "auto"], "--warm runs on the local runner"),
        (["batch", "{file}", "--instruction", "x", "--out", "{out}", "--warm", "-2"], "got -2."),
        (["batch", "{file}", "--instruction", "x", "--out", "{out}", "--warm", "x"], "invalid int"),
        (["mcp", "--warm", "-1"], "--warm must be from 0 (no pool) to 64, got -1."),
        (["mcp", "--warm", "1", "--sandbox", "local"], "--warm needs the docker backend"),
    ],
)
def test_bad_warm_values_exit_non_zero_with_one_sentence(tmp_path, args, says):
    tasks = tmp_path / "suite"
    marker_task(tasks, 0)
    (tmp_path / "in.xlsx").write_bytes(b"x")
    filled = [a.format(tasks=tasks, file=tmp_path / "in.xlsx", out=tmp_path / "out") for a in args]
    done = stateact(*filled, "--model", "script/oracle", timeout=120)
    if args[0] == "mcp":  # mcp has no --model
        done = stateact(*filled, timeout=120)
    assert done.returncode != 0, done.stdout
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out" / "summary.csv").exists()


def test_a_pool_hands_out_each_sandbox_once_and_only_for_its_config():
    """With a stand-in opener: what `take` hands out, in what order, and when it says None."""
    opened = []

    class Fake:
        def __init__(self, config):
            self.config, self.closed = config, False
            opened.append(self)

        def exec(self, argv, timeout=120.0, user="user"):
            return 0, ""

        def close(self):
            self.closed = True

    config = SandboxConfig(image="base")
    pool = WarmPool(PoolConfig(2, config, desktop=False), opener=Fake)
    try:
        assert pool.wait_full(10)
        first, second = pool.take(config), pool.take(config)
        assert first is not second and not first.closed
        assert pool.take(SandboxConfig(image="base", memory_mb=1024)) is None  # another config
        assert pool.wait_full(10) and len(opened) == 4  # both replaced
        assert pool.take(config) not in (first, second)
    finally:
        pool.close()
    assert all(s.closed for s in opened[3:])  # the one left unused is closed with the pool


def test_a_pool_sets_planned_tasks_up_ahead_in_order_and_hands_each_only_to_its_task():
    """With a stand-in opener: planned tasks are set up in plan order in sandboxes of their own;
    a failed setup leaves no sandbox (the task sets itself up); a task taken before the pool got
    to it is planned no more; `forget` closes what was set up for a task that will not run."""
    opened, prepared = [], []

    class Fake:
        def __init__(self, config):
            self.config, self.closed, self.task = config, False, None
            opened.append(self)

        def exec(self, argv, timeout=120.0, user="user"):
            return 0, ""

        def close(self):
            self.closed = True

    def prepare(name, fails=False):
        def run(sandbox):
            prepared.append(name)
            if fails:
                raise RuntimeError("no such file")
            sandbox.task = name

        return name, run

    config = SandboxConfig(image="base")
    pool = WarmPool(PoolConfig(2, config, desktop=False), opener=Fake)
    try:
        pool.plan([prepare("a"), prepare("b", fails=True), prepare("c"), prepare("d")])
        assert pool.wait_full(10)
        assert prepared == ["a", "b", "c"]  # a and c are held; b's sandbox was closed
        assert pool.take_prepared(SandboxConfig(image="base", cpus=1), "a") is None  # config
        assert pool.take_prepared(config, "b") is None
        first = pool.take_prepared(config, "a")
        assert first.task == "a" and not first.closed
        assert pool.wait_full(10) and prepared == ["a", "b", "c", "d"]
        pool.forget("c")
        assert [s.closed for s in opened if s.task == "c"] == [True]
        assert pool.take_prepared(config, "c") is None
        assert pool.take_prepared(config, "d").task == "d"
        assert pool.take_prepared(config, "never-planned") is None
        assert pool.wait_full(10) and pool.take(config).task is None  # nothing planned: plain
    finally:
        pool.close()
    assert [s for s in opened if not s.closed and s.task is None] == [pool_left(opened)]


def pool_left(opened):
    """The one plain sandbox handed out above (its task closes it, not the pool)."""
    return next(s for s in opened if s.task is None and not s.closed)


# --- with Docker ----------------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_suite_tasks_take_pooled_sandboxes_and_see_no_file_of_another_task(tmp_path):
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    for number in range(TASKS):
        marker_task(suite, number)
    config = RunConfig(model="script/oracle")
    config.sandbox.image = "base"
    summary = run_suite([suite], config, out, suite_options=SuiteOptions(warm=2))
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == TASKS and summary["tasks"] == TASKS
    for line in lines:
        assert line["status"] == "completed", line
        assert line["sandbox_from_pool"] is True, line
        # the checker saw its own marker and no other task's, in the home and in /tmp
        assert line["score"] == 1.0, line
    assert not listed_containers(f"stateact.owner={_own_owner()}")  # the pool closed with the suite


@pytest.mark.docker
@pytest.mark.slow
def test_a_suite_sets_its_next_tasks_up_ahead_each_in_a_sandbox_of_its_own(tmp_path):
    """With --warm 2 and one task at a time, every task but the first finds its setup done (its
    setup marker in place), sees no file of another task's setup or work, and scores 1; a task
    whose setup fails ends as it would without a pool."""
    require_image("base")
    suite, out = tmp_path / "suite", tmp_path / "out"
    for number in range(TASKS):
        marker_task(suite, number, setup=True)
    broken = json.loads((suite / "tasks" / "pooled-2.json").read_text())
    (suite / "tasks" / "x.bin").write_text("x")  # to a folder only root may write: it fails
    broken["config"].append(
        {"type": "download", "parameters": {"files": [{"url": "x.bin", "path": "/etc/x/y"}]}}
    )
    (suite / "tasks" / "pooled-2.json").write_text(json.dumps(broken))
    config = RunConfig(model="script/oracle")
    config.sandbox.image = "base"
    run_suite([suite], config, out, parallel=1, suite_options=SuiteOptions(warm=2))
    lines = {
        line["task_id"]: line
        for line in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    cold = run_suite(
        [suite],
        config,
        tmp_path / "cold",
        suite_options=SuiteOptions(selection=Selection(filter="-2$")),
    )
    assert cold["tasks"] == 1
    cold_line = json.loads((tmp_path / "cold" / "results.jsonl").read_text())
    assert [lines[f"pooled-{n}"]["set_up_ahead"] for n in (0, 1, 3)] == [False, True, True]
    for number in (0, 1, 3):
        assert lines[f"pooled-{number}"]["score"] == 1.0, lines[f"pooled-{number}"]
    failed = lines["pooled-2"]
    assert failed["set_up_ahead"] is False  # its setup failed ahead: it set itself up, and failed
    assert (failed["status"], failed["error"]) == (cold_line["status"], cold_line["error"])
    events = [json.loads(e) for e in (out / "runs" / "pooled-1" / "trajectory.jsonl").open()]
    assert [e["set_up_ahead"] for e in events if e["event"] == "setup_done"] == [True]
    assert not listed_containers(f"stateact.owner={_own_owner()}")


def _own_owner() -> str:
    from sandboxes.lifecycle import owner_label

    return owner_label()


@pytest.mark.docker
def test_a_task_of_another_config_opens_its_own_sandbox():
    require_image("base")
    pooled = SandboxConfig(image="base")
    with warm_pool(PoolConfig(1, pooled, desktop=False)) as pool:
        assert pool.wait_full(120)
        other = open_pooled(SandboxConfig(image="base", env={"X": "1"}))
        other.sandbox.close()
        assert other.from_pool is False and pool.ready == 1
        taken = open_pooled(pooled)
        taken.sandbox.close()
        assert taken.from_pool is True and taken.set_up is False


@pytest.mark.docker
@pytest.mark.slow
def test_kill_9_of_a_suite_with_a_full_pool_leaves_nothing_after_the_next_start(tmp_path):
    require_image("base")
    suite = tmp_path / "suite"
    marker_task(suite, 0)
    (suite / "solutions" / "pooled-0.sh").write_text("sleep 600\n")  # the task holds on
    argv = ["suite", str(suite), "--model", "script/oracle", "--image", "base", "--warm", "2"]
    victim = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv, "--out", str(tmp_path / "out")],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
    )
    try:
        owner = _wait_for_owner(victim.pid)
        label = f"stateact.owner={owner}"
        # the task's sandbox and a full pool of 2 behind it
        deadline = time.monotonic() + 240
        while len(listed_containers(label)) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(listed_containers(label)) == 3
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
    assert len(listed_containers(label)) == 3  # kill -9 leaves them behind
    started = stateact("sandbox", "exec", "--image", "base", "--", "true")  # the next start
    assert started.returncode == 0, started.stderr
    assert listed_containers(label) == []


def _wait_for_owner(pid: int, within_s: float = 120) -> str:
    """The owner label of the sandboxes process `pid` starts (read off its first container)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for listed in listed_containers():
            owner = listed.labels.get("stateact.owner", "")
            if owner.split(":")[1:2] == [str(pid)]:
                return owner
        time.sleep(0.3)
    raise AssertionError(f"process {pid} started no sandbox within {within_s} s")


XVFB = "cat /tmp/stateact-desktop/xvfb.pid && test -f /tmp/stateact-desktop.env"


@pytest.mark.docker
@pytest.mark.slow
def test_a_pooled_desktop_is_up_and_the_task_setup_opens_calc_on_it(tmp_path):
    """The pool starts the desktop as a task's first GUI step would; that step (opening a
    workbook in Calc) then runs on the same display, and the first screenshot pays no start."""
    require_image("desktop")
    import openpyxl

    from subagents.desktop import Desktop
    from tasks.schema import SetupStep, Task
    from tasks.setup import run_setup

    book = tmp_path / "pooled.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "pooled"
    workbook.save(book)
    config = SandboxConfig(image="desktop", display_size=(1280, 720))
    task = Task(id="pooled-desktop", instruction="x", base_dir=tmp_path)
    steps = [
        SetupStep(
            type="download",
            parameters={"files": [{"url": str(book), "path": "/home/user/pooled.xlsx"}]},
        ),
        SetupStep(type="open", parameters={"path": "/home/user/pooled.xlsx"}),
    ]
    with warm_pool(PoolConfig(1, config)) as pool:
        assert pool.wait_full(300)
        start = open_pooled(config)
        with start.sandbox as sandbox:
            assert start.from_pool
            code, before = sandbox.exec(["bash", "-c", XVFB])
            assert code == 0, before  # the display was up before the task asked for it
            run_setup(steps, sandbox, task, None, before_agent=True)
            code, after = sandbox.exec(["bash", "-c", XVFB])
            assert code == 0 and after == before  # the setup used the pool's display
            desktop = Desktop(sandbox, (1280, 720))
            deadline = time.monotonic() + 90  # the open step returns at Calc's first window
            while "pooled.xlsx" not in desktop.windows() and time.monotonic() < deadline:
                time.sleep(0.5)
            assert "pooled.xlsx" in desktop.windows()
            desktop.screenshot((1280, 720))
            assert desktop.start_seconds is not None and desktop.start_seconds < 1.0


def test_the_python_api_refuses_bad_warm_values_before_any_task(tmp_path):
    from harness import api

    suite = tmp_path / "suite"
    marker_task(suite, 0)
    out = tmp_path / "out"
    with pytest.raises(StateActError, match=r"^--warm must be from 0 \(no pool\) to 64, got -1"):
        api.run_suite([suite], "script/oracle", out_dir=out, options={"warm": -1})
    with pytest.raises(StateActError, match="^--warm needs the docker backend"):
        api.run_suite([suite], "script/oracle", out_dir=out, warm=2, backend="local")
    with pytest.raises(StateActError, match="^--warm takes a whole number"):
        api.run_batch(
            "x", [suite / "tasks" / "pooled-0.json"], "script/oracle", out_dir=out, warm=1.5
        )
    assert not out.exists()


@pytest.mark.docker
def test_the_mcp_server_hands_out_pooled_sandboxes(tmp_path):
    require_image("base")
    from harness.apps.mcp_server import SandboxPool, ServerSettings

    pool = SandboxPool(ServerSettings(image="base", warm=1), tmp_path)
    try:
        assert pool.warm.wait_full(120)
        owner = object()
        sandbox_id = pool.create(owner, None, None, False)
        assert pool.warm.taken == 1
        assert pool.get(owner, sandbox_id).sandbox.exec(["/bin/true"])[0] == 0
    finally:
        pool.close_all()
    assert not listed_containers(f"stateact.owner={_own_owner()}")


@pytest.mark.docker
@pytest.mark.slow
def test_a_batch_with_a_pool_gives_each_file_a_sandbox_of_its_own(tmp_path):
    """`batch --warm 2` over five workbooks: each run took a pooled sandbox, and each sandbox held
    only its own workbook (the agent's `ls -l /home/user`, recorded in its trajectory)."""
    require_image("base")
    from tests.harness.apps.test_batch import batch_argv, make_books, read_summary, scripts

    make_books(tmp_path / "books")
    agent, gate = scripts(tmp_path)
    out = tmp_path / "out"
    argv = batch_argv(tmp_path / "books", out, agent, gate, "--warm", "2")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    rows = read_summary(out)
    assert len(rows) == 5 and all(row["status"] == "completed" for row in rows.values())
    for name in rows:
        result = json.loads((out / "runs" / name / "result.json").read_text())
        assert result["sandbox_from_pool"] is True, result
        trajectory = (out / "runs" / name / "trajectory.jsonl").read_text().splitlines()
        listings = [  # the tool result of `ls -l /home/user`: "total 8\n-rw-r--r-- … book1.xlsx"
            block["content"][0]["text"]
            for event in map(json.loads, trajectory)
            if event.get("event") == "tool_results"
            for block in event["content"]
            if block["content"] and str(block["content"][0].get("text", "")).startswith("total")
        ]
        assert len(listings) == 1, listings
        books = [word for word in listings[0].split() if word.endswith(".xlsx")]
        assert books == [name], listings[0]
