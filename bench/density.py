"""Many desktops on one machine: K desktop tasks at once through the real suite runner.

Each task opens an application (Calc with a workbook, Chrome with a page; `density_tasks.py`), is
driven by a scripted model that waits `wait_s` before each of its `turns` turns, and ends through
the finish gate and the checker. K grows (1, 2, 4, … or the levels given) until throughput stops
rising or the host's memory would run short. For each K:

- tasks per hour (K tasks started together, over the wall time of the suite run) beside the ideal,
  K / one task's duration (the K = 1 run), and their ratio;
- memory per task sandbox from its cgroup (working set: peak and mean over its life), and the
  gate's short-lived observer sandboxes apart;
- CPU per task: the harness process (less the sampler's own thread), the sandbox's processes
  (cgroup), and the engine (dockerd + containerd, which others on a shared machine use too);
- where a task's time goes (medians over the K tasks): sandbox start, setup, model turns (with
  the tools they call), the gate's freeze + snapshot + observer sandbox + checks, the gate model,
  the checker.

    python -m bench.density --levels 1,2,4 --wait 5 --turns 10 [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.apps.selection import SuiteOptions
from harness.apps.suite import run_suite
from harness.kernel.records import load_events
from harness.run.config import RunConfig
from sandboxes.base import SandboxConfig
from sandboxes.docker_backend import docker_client, resolve_image

from .density_memory import MemorySampler, MiB
from .density_tasks import MIN_TURNS, DensityModels, write_tasks

PHASES = ("start", "setup", "turns", "gate_snapshot", "gate_model", "checker")


class DensityOptions(BaseModel):
    """What one density benchmark run measures."""

    model_config = ConfigDict(extra="forbid")

    levels: list[int] = Field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64])
    """The K to try, in order (K = 1 is always measured first: it gives the ideal)."""
    wait_s: float = Field(5.0, ge=0)
    """The model's thinking time before each turn."""
    turns: int = Field(10, ge=MIN_TURNS)
    waves: int = Field(1, ge=1)
    """Tasks per level: K x waves at --parallel K. One wave starts every desktop at once (a
    burst); more waves show the steady state, where starts fall between other tasks' turns."""
    """Main-agent turns per task (looking around, the answer, finish); the gate adds one."""
    rising: float = Field(1.05, ge=1.0)
    """Throughput must grow by at least this factor over the best so far to go on."""
    headroom_mib: int = Field(2048, ge=0)
    """Memory the host must keep available at the next K (projected from this K's peaks)."""
    image: str = "desktop"
    warm: int = Field(0, ge=0)
    """`--warm N` for the suite: N sandboxes started, and the next tasks set up, ahead."""


@dataclass
class Level:
    """The figures of one K."""

    k: int
    wall_s: float
    tasks_per_hour: float
    ideal_per_hour: float
    ratio: float
    mean_score: float
    statuses: dict[str, int]
    memory: dict[str, float]
    cpu_s_per_task: dict[str, float]
    breakdown_s: dict[str, float]
    host_min_available_mib: float | None
    peak_live_sandboxes: int
    tasks: int = 0
    """How many tasks ran (K x waves)."""
    load_average: tuple[float, float] = (0.0, 0.0)
    """The host's 1-minute load average when the level started and when it ended."""
    notes: list[str] = field(default_factory=list)


def tasks_per_hour(count: int, wall_s: float) -> float:
    """Throughput of `count` tasks finished in `wall_s` seconds."""
    if wall_s <= 0:
        raise ValueError("a run takes a positive time")
    return count * 3600.0 / wall_s


def ideal_per_hour(k: int, single_task_s: float) -> float:
    """K tasks at once, each as fast as one task alone: K / one task's duration."""
    return tasks_per_hour(k, single_task_s)


def _first(events: list[dict], name: str, agent: str | None = None) -> dict | None:
    return next(
        (e for e in events if e.get("event") == name and (agent is None or e["agent"] == agent)),
        None,
    )


def task_breakdown(events: list[dict], result: dict) -> dict[str, float]:
    """Seconds per phase of one finished task, from its trajectory's event times.

    start: until the toolbox answers; setup: the task's steps; turns: the main agent's model
    turns and tools up to its finish call; gate_snapshot: freezing the agent, the snapshot, the
    observer sandbox and the structural checks, until the gate model is asked; gate_model: the
    gate's turns; checker: freezing for good, postconfig and the checker."""
    end = _first(events, "result")
    setup = _first(events, "setup_done")
    if end is None or setup is None or "sandbox_ready_at" not in setup:
        raise ValueError("the trajectory lacks its setup_done (with sandbox_ready_at) or result")
    begin = end["time"] - float(result["duration_s"])
    main_turns = [e for e in events if e.get("event") == "model_turn" and e["agent"] == "main"]
    finish_at = main_turns[-1]["time"] if main_turns else setup["time"]
    gate_tasks = [
        e for e in events if e.get("event") == "task" and str(e["agent"]).startswith("gate")
    ]
    rounds = [e for e in events if e.get("event") == "gate_round"]
    gate_at = gate_tasks[0]["time"] if gate_tasks else finish_at
    judged_at = rounds[-1]["time"] if rounds else gate_at
    return {
        "start": setup["sandbox_ready_at"] - begin,
        "setup": setup["time"] - setup["sandbox_ready_at"],
        "turns": finish_at - setup["time"],
        "gate_snapshot": gate_at - finish_at,
        "gate_model": judged_at - gate_at,
        "checker": end["time"] - judged_at,
    }


def median_breakdown(breakdowns: list[dict[str, float]]) -> dict[str, float]:
    """The median of each phase over the tasks."""
    return {p: round(statistics.median(b[p] for b in breakdowns), 3) for p in PHASES}


def should_stop(levels: list[Level], next_k: int, options: DensityOptions) -> str | None:
    """Why the benchmark should not go on to `next_k` (None: go on)."""
    last = levels[-1]
    best_before = max((lv.tasks_per_hour for lv in levels[:-1]), default=0.0)
    if best_before and last.tasks_per_hour < best_before * options.rising:
        return (
            f"throughput stopped rising at K={last.k} ({last.tasks_per_hour:.0f} tasks/h vs "
            f"{best_before:.0f} before)"
        )
    available = last.host_min_available_mib
    per_sandbox = last.memory.get("task_peak_max_mib", 0.0) + last.memory.get("view_peak_mib", 0.0)
    if available is not None:
        needed = (next_k - last.k) * per_sandbox + options.headroom_mib
        if needed > available:
            return (
                f"memory runs short: K={next_k} needs about {needed:.0f} MiB more than K={last.k} "
                f"(with {options.headroom_mib} MiB headroom), {available:.0f} MiB were available"
            )
    return None


def best_level(levels: list[Level]) -> Level:
    return max(levels, key=lambda lv: lv.tasks_per_hour)


def _memory_figures(sampler: MemorySampler) -> dict[str, float]:
    tasks = sampler.of_kind("task")
    views = sampler.of_kind("view")
    figures = {"task_sandboxes": float(len(tasks)), "gate_views": float(len(views))}
    if tasks:
        figures.update(
            task_peak_mib=round(statistics.median(s.peak_mib for s in tasks), 1),
            task_peak_max_mib=round(max(s.peak_mib for s in tasks), 1),
            task_mean_mib=round(statistics.median(s.mean_mib for s in tasks), 1),
            task_kernel_peak_mib=round(statistics.median(s.kernel_peak_mib for s in tasks), 1),
        )
    if views:
        figures["view_peak_mib"] = round(statistics.median(s.peak_mib for s in views), 1)
    return figures


def _process_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _engine_cpu_s() -> float:
    """CPU seconds of dockerd and containerd so far (0 when they are not visible from here)."""
    total = 0.0
    ticks = 100.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.find("(") + 1 : text.rfind(")")]
        if name in ("dockerd", "containerd"):
            fields = text[text.rfind(")") + 2 :].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def run_level(k: int, options: DensityOptions, work: Path, single_task_s: float | None) -> Level:
    """K x waves tasks, K at once (`--parallel K`), through `run_suite`; `single_task_s` (one
    task alone) None: this is the K = 1 run, which sets the ideal."""
    folder = work / f"k{k}"
    count = k * options.waves
    paths = write_tasks(folder / "tasks", count)
    models = DensityModels(options.wait_s, options.turns)
    config = RunConfig(model="script/density", sandbox=SandboxConfig(image=options.image))
    image_id = docker_client().images.get(resolve_image(docker_client(), options.image)).id
    cpu_before, engine_before = _process_cpu_s(), _engine_cpu_s()
    load_before = os.getloadavg()[0]
    with MemorySampler(image_id) as sampler:
        started = time.perf_counter()
        summary = run_suite(
            paths,
            config,
            folder / "out",
            parallel=k,
            model_factory=models.agent,
            gate_model_factory=models.gate,
            suite_options=SuiteOptions(warm=options.warm),
        )
        wall = time.perf_counter() - started
    harness_cpu = _process_cpu_s() - cpu_before - sampler.cpu_s
    engine_cpu = _engine_cpu_s() - engine_before
    breakdowns, notes = [], []
    for run_dir in sorted((folder / "out" / "runs").iterdir()):
        result = json.loads((run_dir / "result.json").read_text())
        if result["status"] != "completed":
            notes.append(f"{run_dir.name}: {result['status']}: {result.get('error')}")
        events = load_events(run_dir)
        if any(e.get("event") == "stall" for e in events):
            notes.append(f"{run_dir.name}: the stall detector stepped in")
        try:
            breakdowns.append(task_breakdown(events, result))
        except ValueError as exc:
            notes.append(f"{run_dir.name}: no breakdown ({exc})")
    single = single_task_s or wall / options.waves  # None: its own throughput is the ideal
    throughput, ideal = tasks_per_hour(count, wall), ideal_per_hour(k, single)
    sandbox_cpu = sum(s.cpu_s for s in sampler.sandboxes.values())
    return Level(
        k=k,
        wall_s=round(wall, 2),
        tasks_per_hour=round(throughput, 1),
        ideal_per_hour=round(ideal, 1),
        ratio=round(throughput / ideal, 3),
        mean_score=summary["mean_score"] or 0.0,
        statuses=summary["status_counts"],
        memory=_memory_figures(sampler),
        cpu_s_per_task={
            "harness": round(harness_cpu / count, 2),
            "sandboxes": round(sandbox_cpu / count, 2),
            "engine": round(engine_cpu / count, 2),
        },
        breakdown_s=median_breakdown(breakdowns) if breakdowns else {},
        host_min_available_mib=(
            round(sampler.min_available / MiB) if sampler.min_available else None
        ),
        peak_live_sandboxes=sampler.peak_live,
        tasks=count,
        load_average=(round(load_before, 2), round(os.getloadavg()[0], 2)),
        notes=notes,
    )


def run_density(options: DensityOptions, log=print) -> tuple[list[Level], str]:
    """Every level in turn until one of `should_stop`'s reasons; (levels, why it stopped)."""
    levels: list[Level] = []
    order = [1, *[k for k in options.levels if k != 1]]
    with tempfile.TemporaryDirectory(prefix="stateact-density-") as work:
        for index, k in enumerate(order):
            single = levels[0].wall_s / options.waves if levels else None
            levels.append(run_level(k, options, Path(work), single))
            log(describe(levels[-1]))
            if index + 1 == len(order):
                return levels, f"the last level asked for (K={k})"
            reason = should_stop(levels, order[index + 1], options)
            if reason:
                return levels, reason
    raise AssertionError("unreachable")


def describe(level: Level) -> str:
    memory = level.memory
    return (
        f"K={level.k}: {level.tasks_per_hour:.0f} tasks/h (ideal {level.ideal_per_hour:.0f}, "
        f"{level.ratio:.2f}x) in {level.wall_s:.1f} s; sandbox {memory.get('task_peak_mib', 0):.0f}"
        f" MiB peak / {memory.get('task_mean_mib', 0):.0f} MiB mean; CPU/task harness "
        f"{level.cpu_s_per_task['harness']:.1f} s, sandbox {level.cpu_s_per_task['sandboxes']:.1f}"
        f" s; score {level.mean_score:.2f}; time {level.breakdown_s}"
    )


def _levels(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--levels takes numbers like 1,2,4, not {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("--levels needs whole numbers of at least 1")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.density", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--levels",
        type=_levels,
        default=[1, 2, 4, 8, 16, 32, 64],
        help="the K to try, comma-separated (default 1,2,4,…,64; K=1 always runs)",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=5.0,
        help="seconds the scripted model waits before each turn (default 5)",
    )
    parser.add_argument(
        "--turns",
        type=int,
        default=10,
        help=f"main-agent turns per task, at least {MIN_TURNS} (default 10)",
    )
    parser.add_argument(
        "--waves", type=int, default=1, help="tasks per level = K x waves (default 1: K at once)"
    )
    parser.add_argument("--image", default="desktop", help="the sandbox image (default desktop)")
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        help="the suite's --warm N: sandboxes started and tasks set up ahead (default 0)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    if args.turns < MIN_TURNS or args.wait < 0 or args.waves < 1:
        parser.error(
            f"--turns must be at least {MIN_TURNS}, --waves at least 1 and --wait at least 0"
        )
    options = DensityOptions(
        levels=args.levels,
        wait_s=args.wait,
        turns=args.turns,
        waves=args.waves,
        image=args.image,
        warm=args.warm,
    )
    levels, reason = run_density(options, log=lambda line: print(line, file=sys.stderr))
    best = best_level(levels)
    print(f"stopped: {reason}; best K={best.k} at {best.ratio:.2f}x the ideal", file=sys.stderr)
    if args.json:
        data = {
            "options": options.model_dump(),
            "stopped": reason,
            "levels": [asdict(lv) for lv in levels],
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
