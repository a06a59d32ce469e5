"""The tables of an experiment (`stateact experiment`): the paper's columns per arm, per application
domain, and each pair of arms compared on the tasks both finished.

Every number is computed from the arms' results.jsonl lines (one per task and trial) and, for the
split of the gate's false passes, from the passing round's record in the run's `gate/` folder:
- binary success: the share of runs whose checker scored 1; partial success: the mean score (a run
  without a score counts 0);
- cost per task: the mean (and median) of the runs' `cost_usd`; tokens, turns and wall time are
  means per run; GUI use: the share of runs with any screen action by any agent (`gui_steps` > 0)
  and the share of main-agent steps that touched the screen (a delegation to the GUI specialist,
  or a screen action of the main agent's own: the baseline's, `no-act`'s, or bash/Python given
  the display);
- the gate's false passes: among runs the gate reviewed whose checker scored below 1, the share
  it passed, split into `structural` (the passing round's structural layer found a definite gap:
  under `--gate-mode paper` its annotation) and `value` (no structural check would have caught
  it); false rejections: among reviewed runs whose checker scored 1, the share whose last round
  rejected;
- pairs: per task, each arm's mean over its trials; the difference of the two arms' means over the
  tasks both finished, with a paired bootstrap 95% interval (BOOTSTRAP_RESAMPLES resamples of those
  tasks, numpy's default_rng(BOOTSTRAP_SEED), the 2.5th and 97.5th percentiles), and the ratio of
  their mean costs.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
DIGITS = 6
ERROR_STATUSES = ("error", "model_error", "sandbox_error", "setup_error")


def score_of(line: dict) -> float:
    return float(line.get("score") or 0.0)


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), DIGITS) if flags else None


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), DIGITS) if values else None


def false_pass_kind(line: dict, arm_dir: Path) -> str:
    """`structural` when the round that passed a below-1 run found a definite structural gap (the
    paper gate's annotation), else `value`."""
    rounds = int(line.get("gate_rounds") or 0)
    record = arm_dir / str(line.get("run_dir", "")) / "gate" / f"round-{rounds}.json"
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "value"
    annotation = (data.get("structural_annotation") or {}).get("would_reject") or []
    definite = [f for f in data.get("structural", []) if f.get("definite") and not f.get("ok")]
    return "structural" if annotation or definite else "value"


def arm_row(lines: list[dict], arm_dir: Path) -> dict:
    """The paper's columns over one arm's runs (all trials)."""
    costs = [float(r.get("cost_usd") or 0.0) for r in lines]
    main_steps = sum(int(r.get("main_steps") or 0) for r in lines)
    screen_steps = sum(
        int(r.get("gui_delegations") or 0) + int(r.get("main_gui_actions") or 0) for r in lines
    )
    reviewed = [r for r in lines if int(r.get("gate_rounds") or 0) > 0]
    below = [r for r in reviewed if score_of(r) < 1.0]
    passed_below = [r for r in below if r.get("gate_passed")]
    kinds = [false_pass_kind(r, arm_dir) for r in passed_below]
    gate_caught = [False] * (len(below) - len(passed_below))  # rightly rejected: in the base
    perfect = [r for r in reviewed if score_of(r) == 1.0]
    return {
        "tasks": len({r["task_id"] for r in lines}),
        "runs": len(lines),
        "binary_success": _share([score_of(r) == 1.0 for r in lines]),
        "partial_success": _mean([score_of(r) for r in lines]),
        "cost_per_task": _mean(costs),
        "cost_per_task_median": round(statistics.median(costs), DIGITS) if costs else None,
        "cost_total": round(sum(costs), DIGITS),
        "input_tokens": _mean([float(r.get("input_tokens") or 0) for r in lines]),
        "output_tokens": _mean([float(r.get("output_tokens") or 0) for r in lines]),
        "model_turns": _mean([float(r.get("model_turns") or 0) for r in lines]),
        "main_turns": _mean([float(r.get("main_turns") or 0) for r in lines]),
        "wall_time_s": _mean([float(r.get("duration_s") or 0.0) for r in lines]),
        "gui_steps": _mean([float(r.get("gui_steps") or 0) for r in lines]),
        "gui_task_share": _share([int(r.get("gui_steps") or 0) > 0 for r in lines]),
        "gui_step_share": round(screen_steps / main_steps, DIGITS) if main_steps else None,
        "gate_rounds": _mean([float(r.get("gate_rounds") or 0) for r in lines]),
        "gate_reviewed": len(reviewed),
        "gate_false_pass_structural": _share([k == "structural" for k in kinds] + gate_caught)
        if below
        else None,
        "gate_false_pass_value": _share([k == "value" for k in kinds] + gate_caught)
        if below
        else None,
        "gate_false_reject": _share([not r.get("gate_passed") for r in perfect]),
        "errors": sum(1 for r in lines if r.get("status") in ERROR_STATUSES),
    }


def per_task_means(lines: list[dict]) -> dict[str, tuple[float, float, float]]:
    """task id -> (binary, partial, cost) averaged over the task's trials."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        grouped[line["task_id"]].append(line)
    return {
        task: (
            statistics.fmean(score_of(r) == 1.0 for r in runs),
            statistics.fmean(score_of(r) for r in runs),
            statistics.fmean(float(r.get("cost_usd") or 0.0) for r in runs),
        )
        for task, runs in grouped.items()
    }


def paired_interval(differences: list[float]) -> list[float] | None:
    """The paired bootstrap 95% interval of the mean of per-task differences."""
    if not differences:
        return None
    values = numpy.asarray(differences, dtype=float)
    rng = numpy.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, len(values), size=(BOOTSTRAP_RESAMPLES, len(values)))
    means = values[picks].mean(axis=1)
    low, high = numpy.percentile(means, [2.5, 97.5])
    return [round(float(low), DIGITS), round(float(high), DIGITS)]


def pair_row(name_a: str, lines_a: list[dict], name_b: str, lines_b: list[dict]) -> dict:
    a, b = per_task_means(lines_a), per_task_means(lines_b)
    common = sorted(set(a) & set(b))
    binary = [a[t][0] - b[t][0] for t in common]
    partial = [a[t][1] - b[t][1] for t in common]
    cost_a = statistics.fmean(a[t][2] for t in common) if common else 0.0
    cost_b = statistics.fmean(b[t][2] for t in common) if common else 0.0
    return {
        "a": name_a,
        "b": name_b,
        "tasks": len(common),
        "binary_diff": _mean(binary),
        "binary_ci": paired_interval(binary),
        "partial_diff": _mean(partial),
        "partial_ci": paired_interval(partial),
        "cost_ratio": round(cost_a / cost_b, DIGITS) if cost_b > 0 else None,
    }


def build_table(arms: list[dict], lines_by_arm: dict[str, list[dict]], out_dir: Path) -> dict:
    """table.json's content. `arms` are the arms' descriptions (name, model, options, config,
    version, trials) in the experiment's order."""
    rows = []
    for arm in arms:
        lines = lines_by_arm.get(arm["name"], [])
        rows.append({**arm, **arm_row(lines, out_dir / arm["name"])})
    domains = sorted({str(r.get("domain") or "?") for ls in lines_by_arm.values() for r in ls})
    by_domain = {
        domain: {
            arm["name"]: arm_row(
                [r for r in lines_by_arm.get(arm["name"], []) if r.get("domain") == domain],
                out_dir / arm["name"],
            )
            for arm in arms
        }
        for domain in domains
    }
    pairs = [
        pair_row(
            a["name"], lines_by_arm.get(a["name"], []), b["name"], lines_by_arm.get(b["name"], [])
        )
        for a, b in combinations(arms, 2)
    ]
    return {"arms": rows, "by_domain": by_domain, "pairs": pairs}
