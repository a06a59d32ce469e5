"""The `lstc` mode's Step Abstraction and context refinement calls (LocalLSTC §3.2.3, Appendix
D.4 and D.6).

Step Abstraction: one model call turns an executed action into one evidence line and whether it
had an effect, seeing the action, its output, the files it changed and, for a GUI action, the
changed region of the screen (`region.py`) with its box. `--lstc-without abstraction` (or an
unusable answer) uses the plain first/last-lines line and leaves the effect to the runtime.
Context refinement rewrites the long-term state into a short summary plus current evidence.
"""

from __future__ import annotations

from harness.kernel.core import StateActError

from ..jsonask import JsonAsker, prompt
from .abstract import abstract_step, abstraction_request, parse_abstraction, parse_refinement
from .region import changed_region


class StepAbstraction:
    def __init__(self, context, has_screen: bool):
        self.settings = context.config.lstc
        self.record = context.record
        self.has_screen = has_screen
        retries = self.settings.repair_retries
        self.asker = JsonAsker(
            context.model, context, agent="lstc-abstract", retries=retries, main=False
        )
        self.refiner = JsonAsker(context.model, context, agent="lstc", retries=retries)

    def abstract(self, subgoal: str, tool: str, command: str, outcome) -> tuple[str, bool | None]:
        """(evidence line, changed) where `changed` is None when no model judged it."""
        fallback = abstract_step(tool, command, outcome.ok, outcome.output)
        if self.settings.abstraction != "model":
            return fallback, None
        request = abstraction_request(
            subgoal, tool, command, outcome.ok, outcome.output, outcome.diff
        )
        images = ()
        if outcome.after is not None and outcome.ok:
            crop, box = changed_region(outcome.before, outcome.after)
            request += (
                f"\nSCREEN: the image is the changed region {box} (50 px margin) after the action"
                if box
                else "\nSCREEN: the image is the whole screen after the action (no change found)"
            )
            images = (crop,)
        try:
            value, _ = self.asker.ask(
                prompt("lstc_abstract.md"), request, parse_abstraction, "abstract step", images
            )
        except StateActError as exc:
            if not images:
                raise
            # a text-only model refuses the screenshot: the step is abstracted from its output
            if self.record is not None:
                self.record.append("lstc_abstract_error", agent="lstc", error=str(exc)[:500])
            return fallback, None
        if value is None:
            return fallback, None
        effect = "" if value["changed"] else " (no effect)"
        line = f"{tool} `{' '.join(command.split())[:60]}` -> {value['evidence']}{effect}"
        return line, value["changed"] and outcome.ok

    def refine(self, rendered_state: str):
        return self.refiner.ask(
            prompt("lstc_refine.md"), rendered_state, parse_refinement, "refine"
        )
