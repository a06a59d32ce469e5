"""What a suite's results add up to: pure functions over result dicts (one per task, as in
results.jsonl).

A result line is the run's result.json plus what the suite runner knows about the task: `domain`,
`preset`, `control`, `model`, and the trajectory counts `main_steps` (main-agent tool calls) and
`gui_delegations` (its `delegate` calls with agent `gui`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from harness.reports.osworld2_summary import osworld2_summary
from harness.run.config import MODE_OPTIONS


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 6) if values else None


def _score(result: dict) -> float:
    """A task's partial score; a task that was never scored (not run, crashed) counts as 0."""
    score = result.get("score")
    return float(score) if isinstance(score, int | float) else 0.0


def outcome_stats(results: list[dict]) -> dict:
    """Success rate, mean score and mean cost of a group of results."""
    return {
        "tasks": len(results),
        "successes": sum(1 for r in results if r.get("success")),
        "success_rate": _mean(1.0 if r.get("success") else 0.0 for r in results),
        "mean_score": _mean(_score(r) for r in results),
        "mean_cost_usd": _mean(float(r.get("cost_usd") or 0.0) for r in results),
    }


def by_key(results: list[dict], key) -> dict[str, dict]:
    """`outcome_stats` per group, groups named by `key(result)`, in name order."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for result in results:
        groups[key(result)].append(result)
    return {name: outcome_stats(groups[name]) for name in sorted(groups)}


def mode_name(result: dict) -> str:
    """The preset and control mode a result was produced under, e.g. `full/stateact`."""
    return f"{result.get('preset') or 'full'}/{result.get('control') or 'stateact'}"


OPTIONS = (
    "preset",
    "control",
    "best_of",
    "memory",
    "thinking",
    "task_state",
    "worker_depth",
    "nested_gate",
    *MODE_OPTIONS,
)
"""The switches `RunConfig.options` records with each result: what the seeds' ablations vary."""


def option_value(result: dict, name: str) -> str:
    """A result's value of one option as a group name (`?` when the result predates options)."""
    options = result.get("options") or {}
    value = options.get(name, result.get(name) if name in ("preset", "control") else None)
    return "?" if value is None else str(value).lower()


def by_option(results: list[dict]) -> dict[str, dict[str, dict]]:
    """`outcome_stats` per value of every option: results of several suite runs (results.jsonl
    lines put together) give one ablation table per option."""
    return {name: by_key(results, lambda r, name=name: option_value(r, name)) for name in OPTIONS}


def gui_use(results: list[dict]) -> dict:
    """How much the main agent leaned on the GUI specialist."""
    steps = sum(int(r.get("main_steps") or 0) for r in results)
    gui = sum(int(r.get("gui_delegations") or 0) for r in results)
    return {
        "main_steps": steps,
        "gui_delegations": gui,
        "gui_step_share": round(gui / steps, 6) if steps else None,
        "tasks_using_gui": sum(1 for r in results if (r.get("gui_delegations") or 0) > 0),
        "task_share_using_gui": _mean(
            1.0 if (r.get("gui_delegations") or 0) > 0 else 0.0 for r in results
        ),
    }


def gate_confusion(results: list[dict]) -> dict:
    """The finish gate's last decision against the checker's score.

    Only runs the gate actually reviewed count (`gate_rounds` > 0); `gate_passed` is the last
    round's decision. "Correct" means the checker scored 1.
    """
    reviewed = [r for r in results if (r.get("gate_rounds") or 0) > 0]
    accepted = [r for r in reviewed if r.get("gate_passed")]
    rejected = [r for r in reviewed if not r.get("gate_passed")]
    return {
        "reviewed": len(reviewed),
        "accepted_correct": sum(1 for r in accepted if _score(r) == 1.0),
        "accepted_below_1": sum(1 for r in accepted if _score(r) < 1.0),
        "rejected": len(rejected),
        "rejected_but_correct": sum(1 for r in rejected if _score(r) == 1.0),
        "not_reviewed": len(results) - len(reviewed),
    }


def summarize(results: list[dict]) -> dict:
    """The content of summary.json for one suite run."""
    count = len(results)
    return {
        **outcome_stats(results),
        "total_cost_usd": round(sum(float(r.get("cost_usd") or 0.0) for r in results), 6),
        # tasks whose model had no known price: the total above leaves them out, it is not 0
        "cost_unknown_tasks": sum(1 for r in results if "cost_usd" in r and r["cost_usd"] is None),
        "mean_model_turns": _mean(int(r.get("model_turns") or 0) for r in results),
        "mean_main_turns": _mean(int(r.get("main_turns") or 0) for r in results),
        "mean_tool_uses": _mean(int(r.get("tool_uses") or 0) for r in results),
        "mean_duration_s": _mean(float(r.get("duration_s") or 0.0) for r in results),
        "status_counts": dict(sorted(Counter(str(r.get("status")) for r in results).items())),
        "by_domain": by_key(results, lambda r: str(r.get("domain") or "?")),
        "by_mode": by_key(results, mode_name),
        "by_option": by_option(results),
        "gui": gui_use(results),
        "gate": gate_confusion(results),
        **osworld2_summary(results),
        "per_task": [
            {
                "task_id": r.get("task_id"),
                "domain": r.get("domain"),
                "status": r.get("status"),
                "score": r.get("score"),
                "model_turns": r.get("model_turns", 0),
                "tool_uses": r.get("tool_uses", 0),
                "cost_usd": r.get("cost_usd", 0.0),
            }
            for r in results
        ]
        if count
        else [],
    }


def summary_line(summary: dict) -> str:
    """One line for the terminal: tasks, success, mean score, cost."""
    rate = summary.get("success_rate")
    score = summary.get("mean_score")
    return (
        f"{summary['tasks']} tasks · success {summary['successes']}/{summary['tasks']} "
        f"({(rate or 0.0) * 100:.0f}%) · mean score {(score or 0.0):.3f} · cost "
        f"${summary.get('total_cost_usd', 0.0):.4f} (${summary.get('mean_cost_usd') or 0.0:.4f} "
        f"per task)"
        + (
            f" + {summary['cost_unknown_tasks']} task(s) of unknown cost"
            if summary.get("cost_unknown_tasks")
            else ""
        )
    )
