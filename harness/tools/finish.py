"""`finish`: end the task — allowed only after three non-finish steps, and only through the gate."""

from __future__ import annotations

from collections.abc import Callable

from harness.kernel.core import Finished, ToolError, ToolResult, ToolSpec

MIN_STEPS_BEFORE_FINISH = 3


class FinishTool:
    """Refuses early finishes; otherwise asks `review` (the finish gate) and ends or reports gaps.

    `review(summary)` returns None when the finish is accepted, or the gate's rejection text; it
    raises `Finished` itself when the run must end anyway (rejection rounds used up).
    """

    ends_loop = True  # the tool loop names it when the model answers without a call

    name = "finish"

    def __init__(
        self, steps_taken: Callable[[], int], review: Callable[[str], str | None] | None = None
    ):
        self.steps_taken = steps_taken
        self.review = review

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Declare the task complete once the deliverable is saved where the instruction "
                "says. An independent checker then re-reads the saved state; if it finds gaps you "
                "get them back and continue. Set `infeasible: true` only when the task cannot be "
                "done at all."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "summary": {
                        "type": "string",
                        "description": "What was done, in a sentence or two.",
                    },
                    "infeasible": {"type": "boolean", "description": "The task cannot be done."},
                },
                "required": ["summary"],
            },
        )

    def __call__(self, summary: str = "", infeasible: bool = False) -> ToolResult:
        steps = self.steps_taken()
        if steps < MIN_STEPS_BEFORE_FINISH:
            raise ToolError(
                f"finish is refused: only {steps} non-finish step(s) so far; inspect "
                "and verify the "
                f"saved state first (at least {MIN_STEPS_BEFORE_FINISH} steps)."
            )
        if infeasible:
            raise Finished("infeasible", summary)
        rejection = self.review(summary) if self.review else None
        if rejection is None:
            raise Finished("completed", summary)
        return ToolResult(error=rejection)
