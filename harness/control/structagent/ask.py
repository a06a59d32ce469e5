"""OSWorld 2.0's ASK_USER in the `structagent` mode (not in the paper): where the task brings the
`ask_user` tool, the actor gets it, and each answer joins the structured state's notes
(`TaskState.add_note`), which the planner, later actors and the verifiers read in the rendered
state: what the user decided holds for the rest of the task, not only for the subgoal that asked.
The tool itself records the question and the answer as in the default mode."""

from __future__ import annotations

from harness.kernel.core import ToolResult
from harness.tools.ask_user import NO_USER, AskUserTool

NOTE_CHARS = 600


class NotedAsk:
    """The run's `ask_user` tool whose answers become notes of the task state."""

    name = AskUserTool.name

    def __init__(self, tool: AskUserTool, state):
        self.tool = tool
        self.state = state

    def spec(self):
        return self.tool.spec()

    def __call__(self, question: str) -> ToolResult:
        result = self.tool(question=question)
        if result.error is None and result.output and result.output != NO_USER:
            answer = result.output[:NOTE_CHARS]
            self.state.add_note(
                f"Asked {question.strip()[:300]!r}, the user answered: {answer}", "ask_user"
            )
        return result
