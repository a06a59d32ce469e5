"""The gate's answer as a value: passed, each gap with the layer that decided it, and the evidence.

The gate never writes into its caller's objects; whoever asked (the finish tool's round keeper, the
MCP server, `stateact gate`, the benchmark) records the verdict the way it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Layer = Literal["structural", "probe", "model", "error"]
"""Who decided a gap: the model-free structural checks (including asking open applications), a
typed probe with a binding false, the gate model's judgement, or `error` when the gate could not
decide at all (that never counts as a pass)."""

LAYERS: tuple[str, ...] = ("structural", "probe", "model", "error")


@dataclass(frozen=True)
class Gap:
    """One concrete reason the work is not accepted."""

    text: str
    """A short sentence naming the path and what is wrong."""
    layer: Layer
    """The layer that decided it."""

    def to_json(self) -> dict:
        return {"text": self.text, "layer": self.layer}


@dataclass(frozen=True)
class Verdict:
    """One gate round's outcome."""

    passed: bool | None
    """True: accepted; False: rejected; None: the gate could not decide (never a pass)."""
    gaps: tuple[Gap, ...] = ()
    """Why it was not accepted (empty when passed)."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """What the layers saw: structural findings, changed paths, open documents, probes,
    transcript."""

    @property
    def gap_texts(self) -> list[str]:
        return [gap.text for gap in self.gaps]

    @property
    def decided_by(self) -> str:
        """The layer of the first gap, or `model`/`structural` for a pass (who let it through)."""
        if self.gaps:
            return self.gaps[0].layer
        return "model" if "transcript" in self.evidence else "structural"

    def with_gaps(self, texts: list[str], layer: Layer) -> Verdict:
        """This verdict turned into a rejection by further gaps (for example failed stored
        probes)."""
        gaps = (*self.gaps, *(Gap(text, layer) for text in texts))
        return Verdict(False, gaps, self.evidence)

    def to_json(self, evidence: bool = True) -> dict:
        """`passed`, `gaps` (text and layer each) and, unless left out, the evidence."""
        data: dict[str, Any] = {
            "passed": self.passed,
            "decided": self.passed is not None,
            "decided_by": self.decided_by,
            "gaps": [gap.to_json() for gap in self.gaps],
        }
        if evidence:
            data.update({k: v for k, v in self.evidence.items() if k != "transcript"})
        return data


def rejected(texts: list[str], layer: Layer, evidence: dict | None = None) -> Verdict:
    return Verdict(False, tuple(Gap(text, layer) for text in texts), evidence or {})


def undecided(text: str, evidence: dict | None = None) -> Verdict:
    return Verdict(None, (Gap(text, "error"),), evidence or {})
