"""The gate benchmark (gates/bench/): per class, recall of the faults the model-free layers must
catch and false rejections of correct deliverables; the time is seconds per case (all cases share
one sandbox), beside the plainest way: `stateact gate` on one case in a fresh sandbox each. With
STATEACT_GATE_BENCH_MODEL=PROVIDER/NAME the whole gate with that model is measured on the same
cases too (the note adds "whole gate right n/m")."""

from __future__ import annotations

import os
import time

from gates.bench.report import figures, totals
from gates.bench.runner import run_cases
from sandboxes import SandboxConfig

from . import Row, row

BASELINE_CASES = 3


def fresh_sandbox_per_case(cases) -> float:
    """Median seconds of the gate on one case in a fresh sandbox (what `stateact gate` does)."""
    import statistics
    import tempfile
    from pathlib import Path

    from gates.laid_out import gate_laid_out
    from tasks.schema import Task

    samples = []
    for case in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, data in case.after.items():
                host = Path(root) / path.lstrip("/")
                host.parent.mkdir(parents=True, exist_ok=True)
                host.write_bytes(data)
            task = Task.model_validate(
                {"id": case.id, "instruction": case.instruction, "config": [], "base_dir": root}
            )
            started = time.perf_counter()
            gate_laid_out(task, Path(root), None, SandboxConfig())
            samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def rows() -> list[Row]:
    started = time.perf_counter()
    spec = os.environ.get("STATEACT_GATE_BENCH_MODEL")
    model_for = None
    if spec:
        from harness.models import make_model

        def model_for(case):
            return make_model(spec)

    results = run_cases(SandboxConfig(), model_for=model_for)
    per_case = (time.perf_counter() - started) / len(results)
    total = totals(results)
    simple = [r.case for r in results if r.case.shape == "written by code"][:BASELINE_CASES]
    baseline = fresh_sandbox_per_case(simple)
    rows = [
        row(
            f"gate bench: {fig.name} ({'correct' if fig.correct else 'faulty'})",
            per_case,
            fig.cases,
            "-",
            None,
            fig.note(),
        )
        for fig in figures(results)
    ]
    rows.append(
        row(
            "gate bench: all cases",
            per_case,
            total["cases"],
            "a fresh sandbox per case (stateact gate)",
            baseline,
            f"model-free recall {total['caught']}/{total['must_catch']} ({total['recall']:.1%}); "
            f"false rejections {total['false_rejections']}/{total['correct']}",
        )
    )
    return rows
