"""The gate benchmark (gates/bench/): per class, recall of the faults the model-free layers must
catch and false rejections of correct deliverables; the time is seconds per case (all cases share
one sandbox). There is no plainer gate to race; the figures are in the note. With
STATEACT_GATE_BENCH_MODEL=PROVIDER/NAME the whole gate with that model is measured on the same
cases too (the note adds "whole gate right n/m")."""

from __future__ import annotations

import os
import time

from gates.bench.report import figures, totals
from gates.bench.runner import run_cases
from sandboxes import SandboxConfig

from . import Row, row


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
            "-",
            None,
            f"model-free recall {total['caught']}/{total['must_catch']} "
            f"({total['recall']:.1%}); false rejections "
            f"{total['false_rejections']}/{total['correct']}",
        )
    )
    return rows
