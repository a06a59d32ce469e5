"""The warm pool's rows: a task's desktop from the pool (`--warm`, sandboxes/pool.py) beside the
cold start a task pays without one.

A sample from the pool starts once the pool is full (a suite's steady state: tasks take minutes,
a replacement seconds) and ends when the task's desktop is usable; the pool's replacement start
runs meanwhile, as it does in a suite, so it loads the machine under the pooled sample. Samples
alternate with the cold ones, in alternating order, so drifting load hits both alike.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sandboxes import SandboxConfig, open_sandbox
from sandboxes.pool import PoolConfig, open_pooled, warm_pool
from subagents.desktop import Desktop
from tasks.setup import run_setup

from . import Row, row
from .desktop_bench import SIZE, calc_task, final_look, first_look

RUNS = 5
FILL_TIMEOUT_S = 300.0


def rows(runs: int = RUNS) -> list[Row]:
    config = SandboxConfig(image="desktop", display_size=SIZE)

    def ready(sandbox) -> None:
        Desktop(sandbox, SIZE).screenshot(SIZE)  # the first screenshot: the display answers

    with warm_pool(PoolConfig(1, config)) as pool:
        shot = paired_pool_medians(pool, config, ready, runs)
    with tempfile.TemporaryDirectory() as folder, warm_pool(PoolConfig(1, config)) as pool:
        calc, complete = set_up_ahead_medians(pool, config, calc_task(Path(folder)), runs)
    note = "pool of 1, full before each sample; its replacement starts during the pooled one"
    return [
        row(
            "desktop sandbox to its first screenshot, from the warm pool",
            shot[0],
            runs,
            "cold: start the sandbox, then the desktop, then the screenshot",
            shot[1],
            note=note,
        ),
        row(
            "desktop with Calc and a file open, from the warm pool (the task set up ahead)",
            calc[0],
            runs,
            "cold: start the sandbox, run the task's setup (desktop, Calc with the file)",
            calc[1],
            note=f"target <= 0.3 s; each to the first settled look; the pool ran the task's setup "
            f"before the sample; that look equalled the screen 3 s later in {complete}/{runs}",
        ),
    ]


def set_up_ahead_medians(pool, config: SandboxConfig, calc, runs: int):
    """Medians of (taking the sandbox the pool set the task up in, starting one and running the
    task's setup), each to the first settled look; and how many pooled looks were complete."""
    task, steps = calc

    def setup(sandbox) -> None:
        run_setup(steps, sandbox, task, None, before_agent=True)

    pooled, cold, complete = [], [], 0
    for run in range(runs):
        key = f"bench-{run}"
        pool.plan([(key, setup)])
        if not pool.wait_full(FILL_TIMEOUT_S):
            raise RuntimeError("the warm pool did not set the task up")
        started = time.perf_counter()
        start = open_pooled(config, key)
        with start.sandbox as sandbox:
            if not start.set_up:
                raise RuntimeError("the warm pool handed out no sandbox set up for the task")
            look = first_look(sandbox)
            pooled.append(time.perf_counter() - started)
            complete += look == final_look(sandbox)
        started = time.perf_counter()
        with open_sandbox(config) as sandbox:
            setup(sandbox)
            first_look(sandbox)
            cold.append(time.perf_counter() - started)
    return (statistics.median(pooled), statistics.median(cold)), complete


def paired_pool_medians(pool, config: SandboxConfig, work: Callable, runs: int):
    """Medians of (from the pool, cold) for `work(sandbox)`, each sample from taking or starting
    the sandbox to the end of `work`, the pool full before each."""

    def pooled() -> None:
        start = open_pooled(config)
        with start.sandbox as sandbox:
            if not start.from_pool:
                raise RuntimeError("the warm pool handed out no sandbox")
            work(sandbox)

    def cold() -> None:
        with open_sandbox(config) as sandbox:
            work(sandbox)

    samples: dict = {pooled: [], cold: []}
    for run in range(runs):
        for action in (pooled, cold) if run % 2 == 0 else (cold, pooled):
            if not pool.wait_full(FILL_TIMEOUT_S):
                raise RuntimeError("the warm pool did not fill")
            started = time.perf_counter()
            action()
            samples[action].append(time.perf_counter() - started)
    return statistics.median(samples[pooled]), statistics.median(samples[cold])
