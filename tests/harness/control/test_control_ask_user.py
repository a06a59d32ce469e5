"""OSWorld 2.0's `ask_user` in the `andor` and `lstc` control modes, through their real loops on a
real (bubblewrap) sandbox with scripted models: a leaf worker (andor) or the planner's ASK action
(lstc) puts the question to the task's user, the answer comes back into the agent's context and
the question is recorded as in the default mode (an `ask_user` event); a task that brings no
ask_user tool offers none."""

from __future__ import annotations

import json
import re

from harness.apps.osworld2_run import RecordedUser
from harness.control.lstc.controller import LstcController
from harness.control.registry import run_control
from harness.kernel.loop import RunStats
from harness.kernel.records import RunRecord, load_events
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from harness.run.context import RunContext
from harness.tools.ask_user import AskUserTool
from tasks.schema import Task
from tests.control_helpers import RoutedModel, assistant_turns, bash, call

COLOUR = "/home/user/colour.txt"
ANSWER = "Teal, please."
PROBE = {"kind": "file_grep", "path": COLOUR, "patterns": ["^teal$"]}


class ScriptedUser:
    """The task's simulated user: answers every question with one line, keeping the questions."""

    def __init__(self, answer: str | None):
        self.answer, self.questions = answer, []

    def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answer


def context_for(tmp_path, sandbox, control: str, model, user: ScriptedUser | None, gate=None):
    """The RunContext `osworld2_run.PhasedRun` builds: the task's ask_user tool, its answers
    recorded by `RecordedUser`; no tool at all where the task does not let the agent ask."""
    config = RunConfig(model="script/test", control=control)
    config.subagents.enabled = []
    config.lstc.abstraction = "lines"
    config.lstc.final_verification = False
    config.gate.enabled = gate is not None
    record = RunRecord(tmp_path / "run")
    task = Task.model_validate(
        {
            "id": "ask",
            "instruction": f"Write the colour the user wants into {COLOUR}.",
            "config": [],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )
    tools = [AskUserTool(RecordedUser(user, record))] if user is not None else []
    return RunContext(
        config=config,
        model=model,
        sandbox=sandbox,
        task=task,
        gate_model=gate,
        record=record,
        stats=RunStats(),
        extra_tools=tools,
    )


def written(sandbox) -> str:
    code, output = sandbox.exec(["cat", COLOUR])
    return output.strip() if code == 0 else f"(no {COLOUR})"


def asked(tmp_path) -> list[tuple[str, str]]:
    events = load_events(tmp_path / "run")
    return [(e["question"], e["answer"]) for e in events if e["event"] == "ask_user"]


# -- andor: a leaf worker asks ---------------------------------------------------------------------


def andor_planner(system, text):
    if "candidate table" in system:
        return {"constraints": [], "needed": None, "candidates": []}
    if "plan one node" in system:
        return {
            "type": "and",
            "children": [{"goal": "write the colour", "type": "action", "probe": PROBE}],
        }
    if "just succeeded" in system:
        return {"prune": [], "rewrite": {}}
    if "failed" in system:  # a repair: nothing else can learn the colour
        return {"give_up": True}
    raise AssertionError(f"unexpected planner request: {system[:80]}")


class AskingWorker:
    """Asks first (when it has ask_user), then writes what the answer said, then reports."""

    def __init__(self):
        self.offered: list[list[str]] = []
        self.systems: list[str] = []

    def __call__(self, system, messages, tools):
        self.offered.append([t.name for t in tools])
        self.systems.append(system)
        turn = assistant_turns(messages)
        if turn == 0 and "ask_user" in self.offered[-1]:
            return call("ask_user", question="Which colour?")
        if turn <= 1:
            heard = ANSWER in json.dumps(messages)  # the answer is in the worker's context
            return bash(f"echo {'teal' if heard else 'unknown'} > {COLOUR}")
        return call("report", text="wrote the colour")


def test_an_andor_worker_asks_the_user_and_uses_the_answer(tmp_path, local_sandbox):
    user, worker = ScriptedUser(ANSWER), AskingWorker()
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    model = RoutedModel(andor_planner, worker)
    end = run_control(context_for(tmp_path, local_sandbox, "andor", model, user, gate))
    assert end.status == "completed", end
    assert user.questions == ["Which colour?"]
    assert asked(tmp_path) == [("Which colour?", ANSWER)]
    assert "ask_user" in worker.offered[0] and "`ask_user`" in worker.systems[0]
    assert written(local_sandbox) == "teal"


def test_an_andor_worker_has_no_ask_user_where_the_task_allows_no_asking(tmp_path, local_sandbox):
    worker = AskingWorker()
    gate = ScriptedModel([call("verdict", passed=True, gaps=[])])
    model = RoutedModel(andor_planner, worker)
    end = run_control(context_for(tmp_path, local_sandbox, "andor", model, None, gate))
    # the worker never heard an answer: it wrote "unknown", which the node's probe rejects
    assert end.status != "completed"
    assert worker.offered and all("ask_user" not in names for names in worker.offered)
    assert not any("ask_user" in system for system in worker.systems)
    assert asked(tmp_path) == []


def test_the_andor_op_grain_asks_as_one_operation(tmp_path, local_sandbox):
    user = ScriptedUser(ANSWER)

    def planner(system, text):
        if "plan one node" in system and "<node" in text:
            return {"type": "action"}  # the root itself: one operation
        if "Decide whether the node" in system:
            return {"done": ANSWER in text, "reason": "the user answered"}
        return andor_planner(system, text)

    one_op = [call("ask_user", question="Which colour?")]
    context = context_for(tmp_path, local_sandbox, "andor", RoutedModel(planner, one_op), user)
    context.config.andor.grain = "op"
    end = run_control(context)
    assert asked(tmp_path) == [("Which colour?", ANSWER)]
    # the operation's result (the answer) is the node's report, which its completion check read
    assert end.status == "completed", end
    tree = json.loads((tmp_path / "run" / "tree.json").read_text())
    assert ANSWER in tree["root"]["report"]


# -- lstc: the planner's ASK action ----------------------------------------------------------------


def commitment(actions: list[dict]) -> str:
    return json.dumps({"candidates": [{"subgoal": "Learn the colour", "actions": actions}]})


ASK = {"tool": "ask_user", "input": "Which colour?"}


class LstcPlanner:
    """Asks, then writes the colour the USER ANSWERS line names, then finishes."""

    def __init__(self):
        self.requests: list[tuple[str, str]] = []

    def __call__(self, system, text):
        self.requests.append((system, text))
        plans = sum(1 for s, _ in self.requests if "candidate next steps" in s)
        if plans == 1:
            return commitment([ASK])
        if plans == 2:
            said = re.search(r"USER ANSWERS:\n- Q: Which colour\? A: (\w+)", text)
            colour = said.group(1).lower() if said else "unknown"
            return commitment([{"tool": "bash", "input": f"echo {colour} > {COLOUR}"}])
        return commitment([{"tool": "done", "input": "the colour is written"}])


def test_the_lstc_planner_asks_the_user_and_keeps_the_answer(tmp_path, local_sandbox):
    user, planner = ScriptedUser(ANSWER), LstcPlanner()
    end = run_control(context_for(tmp_path, local_sandbox, "lstc", RoutedModel(planner), user))
    assert end.status == "completed", end
    assert user.questions == ["Which colour?"]
    assert asked(tmp_path) == [("Which colour?", ANSWER)]
    assert '"ask_user"' in planner.requests[0][0]  # the prompt names the action
    assert written(local_sandbox) == "teal"
    actions = [e for e in load_events(tmp_path / "run") if e["event"] == "lstc_action"]
    assert (actions[0]["tool"], actions[0]["ok"]) == ("ask_user", True)


def test_a_resumed_lstc_run_keeps_the_answer_without_asking_again(tmp_path, local_sandbox):
    first = ScriptedUser(ANSWER)
    run_control(context_for(tmp_path, local_sandbox, "lstc", RoutedModel(LstcPlanner()), first))
    again = ScriptedUser("Red.")
    context = context_for(tmp_path, local_sandbox, "lstc", RoutedModel(LstcPlanner()), again)
    controller = LstcController(context, review=None)
    controller._restore(-1)  # what `run(resume=True)` does first: replay the recorded actions
    assert again.questions == []
    resumed = [e for e in load_events(tmp_path / "run") if e["event"] == "resumed"]
    assert resumed[-1]["replayed_calls"] == 1  # the bash action ran again, the question did not
    assert controller.state.answers == [f"Q: Which colour? A: {ANSWER}"]


def test_lstc_refuses_an_ask_where_the_task_allows_no_asking(tmp_path, local_sandbox):
    planner = LstcPlanner()
    context = context_for(tmp_path, local_sandbox, "lstc", RoutedModel(planner), None)
    context.config.loop.max_turns = 3
    run_control(context)
    assert '"ask_user"' not in planner.requests[0][0]
    repair = planner.requests[1][1]  # the strict parser names the tools there are
    assert "needs `tool`: one of bash, python, wait, done, infeasible" in repair
    assert asked(tmp_path) == []


# -- structagent: the actor asks, the answer becomes a note of the structured state ---------------


class StructAgentRoles:
    """The initializer (one probed requirement), the planner (one subgoal, then DONE), the step
    verifier (`continue`), the boundary verifier (never reached: the probe decides) and the
    auditor (PASS)."""

    def __init__(self):
        self.plans: list[str] = []

    def __call__(self, system, text):
        if system.startswith("You turn a computer-use task"):
            return [{"text": "colour.txt names the colour the user wants", "probe": PROBE}]
        if system.startswith("You are the planner"):
            self.plans.append(text)
            if len(self.plans) == 1:
                return {"subgoal": "Write the colour the user wants", "targets": ["r1"]}
            return {"done": True, "summary": "the colour is written"}
        if system.startswith("You are the low-level step verifier"):
            return {"status": "continue", "evidence": "written", "feedback": ""}
        if system.startswith("You are the DONE auditor"):
            return {"analysis": "r1 shown", "gaps": [], "verdict": "PASS"}
        raise AssertionError(f"unexpected request: {system[:80]}")


def test_a_structagent_actor_asks_the_user_and_the_planner_reads_the_answer(
    tmp_path, local_sandbox
):
    user, actor, roles = ScriptedUser(ANSWER), AskingWorker(), StructAgentRoles()
    context = context_for(tmp_path, local_sandbox, "structagent", RoutedModel(roles, actor), user)
    end = run_control(context)
    assert end.status == "completed", end
    assert user.questions == ["Which colour?"]
    assert asked(tmp_path) == [("Which colour?", ANSWER)]
    assert "ask_user" in actor.offered[0] and "`ask_user`" in actor.systems[0]
    assert written(local_sandbox) == "teal"
    # the answer is a note of the structured state: the planner's next request shows it
    note = f"Asked 'Which colour?', the user answered: {ANSWER}"
    assert note not in roles.plans[0] and f"- {note}" in roles.plans[1]
    lines = [json.loads(line) for line in (tmp_path / "run" / "state.jsonl").open()]
    assert [(n["text"], n["source"]) for n in lines if n["type"] == "note"] == [(note, "ask_user")]


def test_a_structagent_actor_has_no_ask_user_where_the_task_allows_no_asking(
    tmp_path, local_sandbox
):
    actor, roles = AskingWorker(), StructAgentRoles()
    context = context_for(tmp_path, local_sandbox, "structagent", RoutedModel(roles, actor), None)
    context.config.structagent.max_subgoals = 1
    run_control(context)
    assert actor.offered and all("ask_user" not in names for names in actor.offered)
    assert not any("ask_user" in system for system in actor.systems)
    assert written(local_sandbox) == "unknown"
