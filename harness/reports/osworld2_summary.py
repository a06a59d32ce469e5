"""OSWorld 2.0's two headline numbers over a suite's results, as OSWorld 2.0 defines them: binary
accuracy (the fraction of tasks with full credit, score 1) and the mean partial score (the mean of
the task scores in [0, 1]); a task whose evaluation failed counts 0 in both, as a task without a
verdict does in every StateAct summary, and is counted apart so it can be rerun."""

from __future__ import annotations

BENCHMARK = "osworld2"


def osworld2_summary(results: list[dict]) -> dict:
    """{"osworld2": {...}} when any result is an OSWorld 2.0 task's, else {}."""
    tasks = [r for r in results if r.get("benchmark") == BENCHMARK]
    if not tasks:
        return {}
    scores = [float(r["score"]) if isinstance(r.get("score"), int | float) else 0.0 for r in tasks]
    return {
        BENCHMARK: {
            "tasks": len(tasks),
            "binary_accuracy": round(sum(s == 1.0 for s in scores) / len(tasks), 6),
            "mean_partial_score": round(sum(scores) / len(tasks), 6),
            "evaluation_errors": sum(1 for r in tasks if r.get("status") == "evaluation_error"),
            "phases": sum(int(r.get("phases") or 0) for r in tasks),
            "phases_judged": sum(int(r.get("phases_judged") or 0) for r in tasks),
        }
    }
