"""`make bench`'s density rows (see `bench/density.py`): one row per K, seconds per task at that K
beside the ideal (one task alone, divided by K), so the ratio is throughput over the ideal; and a
row naming the best K. Each row keeps every figure of its K under `details`.

STATEACT_DENSITY_LEVELS (default 1,2,4,8,16,32,64; the run stops early when throughput stops
rising or memory would run short), STATEACT_DENSITY_WAIT_S (5) and STATEACT_DENSITY_TURNS (10) and
STATEACT_DENSITY_WAVES (1: K tasks per level; more run K x waves, K at a time)
choose what is measured; on a shared machine keep the levels small. Then, at the best K, the
steady state: STATEACT_DENSITY_STEADY_WAVES (3; 0 skips it) waves of K tasks, without a pool and
with `--warm K` (each next wave's sandboxes started and its tasks set up while the wave before
waits for its model).
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import Row, row
from .density import DensityOptions, Level, best_level, run_density, run_level


@dataclass
class DensityRow(Row):
    details: dict = field(default_factory=dict)


def options_from_env() -> DensityOptions:
    levels = os.environ.get("STATEACT_DENSITY_LEVELS", "1,2,4,8,16,32,64")
    return DensityOptions(
        levels=[int(part) for part in levels.split(",") if part.strip()],
        wait_s=float(os.environ.get("STATEACT_DENSITY_WAIT_S", "5")),
        turns=int(os.environ.get("STATEACT_DENSITY_TURNS", "10")),
        waves=int(os.environ.get("STATEACT_DENSITY_WAVES", "1")),
    )


def level_row(level: Level, options: DensityOptions, single_task_s: float) -> DensityRow:
    memory = level.memory
    cpu = level.cpu_s_per_task
    note = (
        f"{level.tasks_per_hour:.0f} tasks/h vs ideal {level.ideal_per_hour:.0f}; per task "
        f"sandbox {memory.get('task_peak_mib', 0):.0f} MiB peak, "
        f"{memory.get('task_mean_mib', 0):.0f} MiB mean (cgroup working set); CPU per task "
        f"harness {cpu['harness']:.2f} s, sandbox {cpu['sandboxes']:.1f} s, engine "
        f"{cpu['engine']:.1f} s; median s: "
        + ", ".join(f"{phase} {seconds:.1f}" for phase, seconds in level.breakdown_s.items())
        + f"; mean score {level.mean_score:.2f}"
    )
    base = row(
        f"density: K={level.k} desktop tasks at once, suite runner "
        f"(Calc/Chrome open, {options.turns} turns x {options.wait_s:g} s)",
        level.wall_s / (level.k * options.waves),
        level.k * options.waves,
        "ideal: one task alone, divided by K",
        single_task_s / level.k,
        note,
    )
    return DensityRow(**asdict(base), details=asdict(level))


def rows() -> list[Row]:
    options = options_from_env()
    levels, reason = run_density(options, log=lambda line: print(line, file=sys.stderr))
    single = levels[0].wall_s / options.waves
    result: list[Row] = [level_row(level, options, single) for level in levels]
    best = best_level(levels)
    result.append(
        row(
            "density: best K (tasks per hour)",
            best.wall_s / (best.k * options.waves),
            best.k * options.waves,
            "ideal at that K",
            single / best.k,
            f"K={best.k}: {best.tasks_per_hour:.0f} tasks/h, {best.ratio:.2f}x the ideal "
            f"{best.ideal_per_hour:.0f}; stopped: {reason}",
        )
    )
    waves = int(os.environ.get("STATEACT_DENSITY_STEADY_WAVES", "3"))
    return result + (steady_rows(options, best.k, waves, single) if waves else [])


def steady_rows(options: DensityOptions, k: int, waves: int, single: float) -> list[Row]:
    """K x `waves` tasks, K at a time, without a pool and with `--warm K`."""
    result = []
    with tempfile.TemporaryDirectory(prefix="stateact-density-steady-") as work:
        for warm in (0, k):
            steady = options.model_copy(update={"waves": waves, "warm": warm})
            level = run_level(k, steady, Path(work) / f"warm{warm}", single)
            print(f"steady, --warm {warm}: " + describe_level(level), file=sys.stderr)
            base = level_row(level, steady, single)
            base.name = f"density, steady state: K={k} at a time, {waves} waves, " + (
                f"--warm {warm} (set up ahead)" if warm else "no pool"
            )
            result.append(base)
    return result


def describe_level(level: Level) -> str:
    return f"{level.tasks_per_hour:.0f} tasks/h, {level.ratio:.2f}x the ideal, {level.breakdown_s}"
