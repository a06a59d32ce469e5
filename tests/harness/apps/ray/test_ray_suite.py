"""`suite --ray`: the bundled suite on Ray's own two-node test cluster, on 127.0.0.1 only, with one
node killed mid-run; every task ends with exactly one row, each naming its node, and no sandbox is
left behind. Ray's processes are checked to bind and dial nothing but the loopback address."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from itertools import groupby
from pathlib import Path

import pytest

from harness.apps.ray.cluster import RESOURCE, RayOptions
from harness.apps.ray.suite import NODE_LOST, run_suite_on_ray
from harness.run.config import RunConfig
from tasks.suites.longhorizon.build import SUITE_DIR, ensure_fixtures
from tests.conftest import require_image
from tests.ray_helpers import (
    LOOPBACK_ENV,
    containers_of,
    descendants,
    loopback_cluster,
    marked_containers,
    non_loopback_sockets,
    ray_pids,
    require_ray,
    unused_port,
)

ray = require_ray()

ALL_TASKS = sorted((SUITE_DIR / "tasks").glob("*.json"))
# Two tasks of each kind (Calc, Writer, Impress, GUI, web, infeasible, ...): enough to spread over
# both nodes and outlive the kill; every task's own score is test_suite_longhorizon.py's job.
TASK_PATHS = [
    path
    for _, of_kind in groupby(ALL_TASKS, key=lambda path: path.stem.rsplit("-", 1)[0])
    for path in list(of_kind)[:2]
]
TASK_IDS = [path.stem for path in TASK_PATHS]
KILL_AFTER = 6


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
@pytest.mark.timeout(900)  # 18 desktop tasks on two cores: about 3 minutes
def test_two_nodes_one_killed_mid_run_every_task_once(tmp_path):
    require_image("desktop")
    ensure_fixtures()
    assert len(TASK_IDS) == 18 and len(ALL_TASKS) == 46
    marker = uuid.uuid4().hex
    config = RunConfig(model="script/oracle")
    config.sandbox.env = {"STATEACT_RAY_TEST": marker}  # finds this run's containers
    out = tmp_path / "out"
    with loopback_cluster(slots_per_node=(1, 1)) as (cluster, nodes):
        doomed = nodes[1]
        killed = {}
        foreign_sockets = []

        def on_result(line: dict) -> None:
            if len(killed) or line.get("node") is None:
                return
            on_result.count = getattr(on_result, "count", 0) + 1
            if on_result.count == KILL_AFTER:
                foreign_sockets.extend(non_loopback_sockets(ray_pids()))
                killed["id"] = doomed.node_id
                killed["containers"] = len(marked_containers(marker))
                cluster.remove_node(doomed, allow_graceful=False)

        summary = run_suite_on_ray(
            TASK_PATHS,
            config,
            out,
            RayOptions(address=cluster.address, retries=3),
            on_result=on_result,
        )
        survivor = nodes[0].node_id
    assert foreign_sockets == [], foreign_sockets
    assert killed["containers"] >= 1  # the killed node had a sandbox running
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(row["task_id"] for row in rows) == TASK_IDS  # all of them, each once
    # The local runner's known result on this suite: every reference solution (and every
    # infeasible declaration) scores 1.0 (tests/harness/apps/test_suite_longhorizon.py checks
    # each one).
    assert {row["task_id"]: row["score"] for row in rows} == dict.fromkeys(TASK_IDS, 1.0)
    assert not [row for row in rows if row["status"] == NODE_LOST]
    assert {row["node"] for row in rows} <= {survivor, killed["id"]}
    assert all(row["node_ip"] == "127.0.0.1" for row in rows)
    after_kill = rows[KILL_AFTER:]  # (one may have finished on the doomed node as it was killed)
    assert sum(row["node"] == killed["id"] for row in after_kill) <= 1
    for row in rows:
        run_dir = out / row["run_dir"]
        assert json.loads((run_dir / "result.json").read_text())["task_id"] == row["task_id"]
        assert (run_dir / "trajectory.html").is_file()
    assert summary["suite_tasks"] == len(TASK_IDS) and summary["unfinished"] == 0
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()
    assert marked_containers(marker) == []  # none left, the killed node's included

    # --resume reads every finished run back: same rows, nothing rerun, no cluster work.
    with loopback_cluster(slots_per_node=(1,)) as (cluster, _):
        again = run_suite_on_ray(
            TASK_PATHS, config, out, RayOptions(address=cluster.address), resume=True
        )
    assert again["suite_tasks"] == len(TASK_IDS) and again["unfinished"] == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(TASK_IDS)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **LOOPBACK_ENV}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


def one_sentence(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("stateact: error:")]
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return lines[0]


SUITE_ARGS = ("suite", str(SUITE_DIR / "tasks" / "lh-calc-001.json"), "--model", "script/oracle")


def test_unreachable_address_is_one_sentence(tmp_path):
    done = run_cli(*SUITE_ARGS, "--ray", f"127.0.0.1:{unused_port()}", "--out", "o", cwd=tmp_path)
    assert "no Ray cluster answers at 127.0.0.1" in one_sentence(done)
    assert not (tmp_path / "o" / "results.jsonl").exists()


@pytest.mark.docker
def test_cluster_without_slots_or_docker_is_one_sentence(tmp_path):
    marker_before = set(ray_pids())
    with loopback_cluster(slots_per_node=(0,)) as (cluster, _):
        done = run_cli(*SUITE_ARGS, "--ray", cluster.address, "--out", "o", cwd=tmp_path)
        assert f"offers no `{RESOURCE}` resource" in one_sentence(done)
        # A node whose Docker engine cannot be reached.
        cluster.add_node(
            num_cpus=1,
            resources={RESOURCE: 1},
            node_ip_address="127.0.0.1",
            env_vars={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"},
        )
        done = run_cli(*SUITE_ARGS, "--ray", cluster.address, "--out", "o", cwd=tmp_path)
        sentence = one_sentence(done)
        assert "cannot run sandboxes: the Docker engine is not running" in sentence
    assert not (tmp_path / "o" / "results.jsonl").exists()
    assert set(ray_pids()) <= marker_before  # the drivers and the cluster are gone


def test_without_ray_installed_says_how_to_install(tmp_path):
    """A Python that cannot import ray (its import is blocked) gets the install sentence."""
    blocker = tmp_path / "block" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    env = {**os.environ, "PYTHONPATH": str(blocker.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *SUITE_ARGS, "--ray", "auto", "--out", "o"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert "install it with `pip install 'stateact[ray]'`" in one_sentence(done)


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_ctrl_c_cancels_remote_tasks_and_their_sandboxes(tmp_path):
    """`--ray auto` (a one-node cluster the driver starts); SIGINT to the driver once sandboxes
    run: exit 130, and neither a sandbox nor a Ray process of that run is left."""
    require_image("desktop")
    argv = [sys.executable, "-m", "harness.cli", "suite", str(SUITE_DIR), "--model"]
    argv += ["script/oracle", "--ray", "auto", "--parallel", "2", "--out", "o"]
    env = {**os.environ, **LOOPBACK_ENV}
    driver = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen: set[int] = set()
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and driver.poll() is None:
            seen |= descendants(driver.pid)
            results = tmp_path / "o" / "results.jsonl"
            if results.exists() and results.read_text().strip() and containers_of(seen):
                break
            time.sleep(0.5)
        assert driver.poll() is None, driver.communicate()[1][-2000:]
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
    # Ray's core worker can abort the driver (a RAY_CHECK in TaskManager::CompletePendingTask,
    # seen once in CI) when a cancelled task's reply arrives late: SIGABRT's exit then, Ray's own
    # crash. What StateAct owns is checked either way: no sandbox or Ray process left, the
    # finished lines kept.
    ray_abort = driver.returncode in (-signal.SIGABRT, 128 + signal.SIGABRT) and (
        "CompletePendingTask" in stderr
    )
    assert driver.returncode == 130 or ray_abort, stderr[-2000:]
    assert "Traceback" not in stderr
    assert containers_of(seen) == []
    assert not seen & set(ray_pids())
    lines = (tmp_path / "o" / "results.jsonl").read_text().splitlines()
    assert 1 <= len(lines) < 46 and len({json.loads(x)["task_id"] for x in lines}) == len(lines)
