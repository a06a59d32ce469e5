"""`ask_user`: put a question to the task's user (OSWorld 2.0's `ASK_USER`).

Some tasks come with a simulated user who knows what the instruction leaves open; elsewhere no
user is there and the agent is told so, to decide from the instruction and the machine. The gate
never sees the conversation: it judges the machine, not what the user said.
"""

from __future__ import annotations

from typing import Protocol

from harness.kernel.core import StateActError, ToolResult, ToolSpec

NO_USER = (
    "No user is available for this task. Decide from the instruction and what the machine shows."
)
MAX_QUESTION_CHARS = 4000


class UserChannel(Protocol):
    """Who answers: the benchmark's user simulator, or None where a task has none."""

    def ask(self, question: str) -> str | None: ...


class AskUserTool:
    name = "ask_user"

    def __init__(self, user: UserChannel | None):
        self.user = user

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=(
                "Ask the person who gave you the task a question, when the instruction leaves "
                "something open that only they can decide. Ask one clear question at a time."
            ),
            input_schema={
                "type": "object",
                "properties": {"question": {"type": "string", "description": "The question."}},
                "required": ["question"],
            },
        )

    def __call__(self, question: str) -> ToolResult:
        question = question.strip()
        if not question:
            return ToolResult(error="ask_user needs a question; the one given was empty.")
        if len(question) > MAX_QUESTION_CHARS:
            return ToolResult(
                error=f"the question is {len(question)} characters long; ask in at most "
                f"{MAX_QUESTION_CHARS}."
            )
        if self.user is None:
            return ToolResult(output=NO_USER)
        try:
            answer = self.user.ask(question)
        except StateActError as exc:
            return ToolResult(error=f"the user could not be reached: {exc}")
        return ToolResult(output=answer if answer else NO_USER)


def ask_user_among(tools: list) -> AskUserTool | None:
    """The `ask_user` tool among a task's tools (`RunContext.extra_tools`), or None where the task
    does not let the agent ask."""
    return next((t for t in tools if getattr(t, "name", "") == AskUserTool.name), None)
