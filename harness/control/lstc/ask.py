"""The `lstc` mode's ASK action: on a task that lets the agent ask its user (OSWorld 2.0's
`ASK_USER`, the run's `ask_user` tool), the planner may commit `{"tool": "ask_user", "input":
QUESTION}`. The answer joins the long-term state verbatim (`LongTermState.answers`), since what the
user decided holds for the rest of the task, not only for the step that asked."""

from __future__ import annotations

from harness.tools.ask_user import AskUserTool, ask_user_among

from .channels import Outcome

ASK_TOOL = AskUserTool.name
KEPT_ANSWERS = 8


def ask_user_tool(context):
    """The run's `ask_user` tool, or None where the task brings none (asking is not allowed)."""
    return ask_user_among(context.extra_tools)


def ask(tool, question: str, state) -> Outcome:
    """Put `question` to the user through the run's tool (which records the question and the
    answer as the default mode does); the answer is kept in `state`."""
    result = tool(question=question)
    if result.error is not None:
        return Outcome(False, result.error, [])
    answer = str(result.output)
    state.answers = [*state.answers, f"Q: {question[:300]} A: {answer[:600]}"][-KEPT_ANSWERS:]
    return Outcome(True, f"the user answered: {answer}", [])
