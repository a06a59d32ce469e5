"""The benchmark's figures: recall of the faults the model-free layers must catch and false
rejections of correct deliverables, per class; with a model, the whole gate's accuracy too."""

from __future__ import annotations

from dataclasses import dataclass

from .runner import CaseResult


@dataclass
class ClassFigures:
    """One correct shape or fault class."""

    name: str
    correct: bool
    cases: int = 0
    must_catch: int = 0
    caught: int = 0
    """Rejected by the model-free layers (for a correct shape: a false rejection)."""
    model_right: int = 0
    with_model: int = 0

    @property
    def recall(self) -> float | None:
        return self.caught / self.must_catch if self.must_catch else None

    def note(self) -> str:
        if self.correct:
            text = f"false rejections {self.caught}/{self.cases}"
        elif self.must_catch:
            text = f"model-free recall {self.caught}/{self.must_catch} ({self.recall:.0%})"
        else:
            text = f"left to the model layer; model-free caught {self.caught}/{self.cases}"
        if self.with_model:
            text += f"; whole gate right {self.model_right}/{self.with_model}"
        return text


def figures(results: list[CaseResult]) -> list[ClassFigures]:
    by_class: dict[str, ClassFigures] = {}
    for result in results:
        case = result.case
        row = by_class.setdefault(case.shape, ClassFigures(case.shape, case.correct))
        row.cases += 1
        row.must_catch += case.structural
        row.caught += result.caught
        if result.with_model is not None:
            row.with_model += 1
            row.model_right += (result.with_model.passed is True) == case.correct
    return sorted(by_class.values(), key=lambda row: (not row.correct, row.name))


def totals(results: list[CaseResult]) -> dict:
    must = [r for r in results if r.case.structural]
    correct = [r for r in results if r.case.correct]
    return {
        "cases": len(results),
        "must_catch": len(must),
        "caught": sum(r.caught for r in must),
        "recall": sum(r.caught for r in must) / len(must) if must else None,
        "correct": len(correct),
        "false_rejections": sum(r.false_rejection for r in correct),
    }


def markdown(results: list[CaseResult]) -> str:
    """The README's table."""
    lines = [
        "| Class | Truth | Cases | Model-free layers must catch | Caught / falsely rejected |",
        "|---|---|---|---|---|",
    ]
    for row in figures(results):
        truth = "correct" if row.correct else "faulty"
        must = "-" if row.correct else ("yes" if row.must_catch else "no (model layer)")
        lines.append(f"| {row.name} | {truth} | {row.cases} | {must} | {row.caught} |")
    return "\n".join(lines)
