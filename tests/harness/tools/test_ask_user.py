"""The `ask_user` tool: answered by the task's user, or told that none is there."""

from harness.kernel.core import StateActError
from harness.tools.ask_user import NO_USER, AskUserTool


class ScriptedUser:
    def __init__(self, answer=None, fails=False):
        self.answer, self.fails, self.questions = answer, fails, []

    def ask(self, question):
        self.questions.append(question)
        if self.fails:
            raise StateActError("OSWorld-V2's ask failed: timeout")
        return self.answer


def test_the_users_answer_comes_back():
    user = ScriptedUser("Teal.")
    result = AskUserTool(user)(question="  Which colour?  ")
    assert result.output == "Teal." and result.error is None
    assert user.questions == ["Which colour?"]


def test_without_a_user_the_agent_is_told_so():
    assert AskUserTool(None)(question="Which colour?").output == NO_USER
    assert AskUserTool(ScriptedUser(None))(question="Which colour?").output == NO_USER


def test_bad_questions_and_failures_are_tool_errors():
    tool = AskUserTool(ScriptedUser("x"))
    assert "empty" in tool(question=" ").error
    assert "at most" in tool(question="?" * 5000).error
    assert "could not be reached" in AskUserTool(ScriptedUser(fails=True))(question="q").error
    assert tool.spec().input_schema["required"] == ["question"]
