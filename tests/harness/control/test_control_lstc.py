"""`--control lstc` over the real OpenAI SDK against the local fake OpenAI-compatible server, in
a real (bubblewrap) sandbox: a repeated no-progress action is detected and routed (feedback, then
its repeats are refused), a malformed answer gets one repair retry, and the task ends through a
verified finish."""

from __future__ import annotations

import json

import pytest

from harness.control.lstc.controller import abstract_step, parse_commitment
from harness.control.memory import LessonStore
from harness.run.config import RunConfig
from harness.runner import run_task
from tasks.schema import Task
from tests.fakes import FakeOpenAIServer

REPORT = "/home/user/report.txt"
LOOK = [{"tool": "bash", "input": "ls /home/user"}]


def commit(subgoal: str, actions: list[dict], extra: int = 0) -> dict:
    candidates = [{"subgoal": subgoal, "actions": actions}]
    candidates += [
        {"subgoal": f"alternative {n}", "actions": [{"tool": "bash", "input": "true"}]}
        for n in range(extra)
    ]
    return {"text": json.dumps({"candidates": candidates, "best": 1})}


def report_task(tmp_path, task_id: str) -> Task:
    return Task.model_validate(
        {
            "id": task_id,
            "instruction": f"Write done into {REPORT}.",
            "config": [],
            "evaluator": {},
            "base_dir": tmp_path,
        }
    )


def prompts(server) -> list[str]:
    return [json.dumps(r["json"]["messages"]) for r in server.completion_requests()]


def test_lstc_detects_a_repeated_action_and_reaches_a_verified_finish(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    requirements = [
        {
            "text": "report.txt says done",
            "probe": {"kind": "file_grep", "path": REPORT, "patterns": ["^done$"]},
        }
    ]
    write = [
        {"tool": "python", "input": f"open('{REPORT}', 'w').write('done\\n')"},
        {"tool": "bash", "input": f"cat {REPORT}"},
    ]
    responses = [
        {"text": json.dumps(requirements)},  # the task state's requirements
        commit("Find where the report goes", LOOK, extra=2),  # new output: the subgoal advances
        commit("Check the folder again", LOOK),  # same output, no effect: the subgoal is kept
        commit("continue", LOOK),  # a third identical look: refused before it runs
        {"text": "Sure! Here is my plan: {candidates: oops"},  # malformed: one repair retry follows
        commit("Write the report", write),
        commit("Finish", [{"tool": "done", "input": "report written and read back"}]),
        # The finish gate (structural checks pass, then the gate model): a probe, then the verdict.
        {"tool_calls": [{"name": "probe", "input": {"spec": requirements[0]["probe"]}}]},
        {"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]},
    ]
    with FakeOpenAIServer(responses) as server:
        config = RunConfig(model="openai/qwen3-9b", control="lstc")
        config.model_options.base_url, config.model_options.api_key = server.base_url, "test-key"
        config.sandbox.backend = "local"
        config.task_state.enabled = True
        config.lstc.abstraction = "lines"  # this test follows the routing; abstraction has its own
        task = report_task(tmp_path, "lstc")
        result = run_task(task, config, tmp_path / "run", resume=False)
        sent = prompts(server)
        requests = server.completion_requests()
    assert result["status"] == "completed" and result["gate_passed"] is True, result
    assert result["control"] == "lstc" and len(requests) == len(responses)
    assert "tools" not in requests[1]["json"]  # planning requests are tool-less JSON requests
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    stalls = [e for e in events if e["event"] == "stall"]
    assert [(s["kind"], s["response"]) for s in stalls] == [("suppressed", "feedback")]
    steps = [e for e in events if e["event"] == "lstc_step"]
    assert [s["state"]["status"] for s in steps[:3]] == ["advance", "continue", "stall"]
    # S2L: the step proposing a new subgoal changed nothing, so the persistent one stays
    assert [s["state"]["subgoal"] for s in steps[:3]] == ["Find where the report goes"] * 3
    assert "was not adopted" in sent[3]
    assert steps[2]["results"][0]["refused"] is True
    assert sum(e["event"] == "lstc_action" and e["input"] == "ls /home/user" for e in events) == 2
    assert [e["reason"] for e in events if e["event"] == "lstc_suppressed"] == [
        "it already ran 2 times in a row with the same result"
    ]
    assert "DO NOT REPEAT" in sent[4] and "Refused before it ran" in sent[4]
    assert "could not be used" in sent[5]  # the repair retry names the parse error
    assert (
        "SUBGOAL: Write the report" in sent[6]
        and "cat /home/user/report.txt` -> ok: done" in sent[6]
    )
    state = [
        json.loads(line) for line in (tmp_path / "run" / "state.jsonl").read_text().splitlines()
    ]
    assert [(c["requirement"], c["after"]) for c in state if c["type"] == "change"] == [
        ("r1", "VERIFIED")
    ]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"candidates": []}, "1 to 3 proposals"),
        (
            {
                "candidates": [{"subgoal": "x", "actions": [{"tool": "bash", "input": "ls"}]}],
                "best": 2,
            },
            "from 1 to 1",
        ),
        (
            {"candidates": [{"subgoal": "x", "actions": [{"tool": "click", "input": "ok"}]}]},
            "one of bash",
        ),
        ({"candidates": [{"subgoal": "x", "actions": [{"tool": "bash"}]}]}, "needs `input`"),
    ],
)
def test_commitments_are_parsed_strictly(answer, message):
    with pytest.raises(ValueError, match=message):
        parse_commitment(answer)


def test_step_abstraction_keeps_identifiers():
    output = "\n".join(f"/home/user/file{n}.xlsx" for n in range(10))
    line = abstract_step("bash", "ls   /home/user", True, output)
    assert (
        line.startswith("bash `ls /home/user` -> ok: /home/user/file0.xlsx")
        and "/home/user/file9.xlsx" in line
    )


def test_step_abstraction_by_the_model_and_context_refinement(tmp_path, local_sandbox):
    del local_sandbox  # only for its bubblewrap check
    write = {"tool": "python", "input": f"open('{REPORT}', 'w').write('done\\n')"}
    abstract = {"text": json.dumps({"evidence": "wrote report.txt holding done", "changed": True})}
    responses = [
        commit("Write the report", [write]),
        abstract,
        commit("continue", [{"tool": "bash", "input": f"cat {REPORT}"}]),
        *[{"text": "it printed done"}] * 4,  # no JSON, 3 repairs: the lines fall back
        {
            "text": json.dumps(
                {"summary": "report.txt written, read back", "evidence": ["holds done"]}
            )
        },
        commit("Finish", [{"tool": "done", "input": "written"}]),  # no gate: Final Verification
        {"text": json.dumps({"verdict": "FAIL", "missing": "the report is not read back"})},
        commit("Finish", [{"tool": "done", "input": "written and read back"}]),
        {"text": json.dumps({"verdict": "PASS", "missing": ""})},
    ]
    with FakeOpenAIServer(responses) as server:
        config = RunConfig(model="openai/qwen3-9b", control="lstc")
        config.model_options.base_url, config.model_options.api_key = server.base_url, "test-key"
        config.sandbox.backend = "local"
        config.gate.enabled = False
        config.lstc.refine_max = 2
        task = Task.model_validate(
            {
                "id": "lstc-abstract",
                "instruction": f"Write done into {REPORT}.",
                "config": [],
                "evaluator": {},
                "base_dir": tmp_path,
            }
        )
        result = run_task(task, config, tmp_path / "run", resume=False)
        sent = prompts(server)
    assert result["status"] == "completed" and len(sent) == len(responses), result
    assert "ACTION: python open(" in sent[1] and f"FILES CHANGED BY IT:\\n- {REPORT}" in sent[1]
    assert "python `open(" in sent[2] and "-> wrote report.txt holding done" in sent[2]
    assert "could not be used" in sent[6]  # the third repair
    assert "bash `cat /home/user/report.txt` -> ok: done" in sent[7]  # the fallback, refined
    assert "SUMMARY SO FAR: report.txt written, read back" in sent[8] and "- holds done" in sent[8]
    assert "wrote report.txt holding done" not in sent[8]  # the refinement replaced the evidence
    assert "CLAIM: written" in sent[9] and "SUMMARY: report.txt written, read back" in sent[9]
    assert "Final Verification: FAIL. Not yet shown: the report is not read back" in sent[10]


def test_lstc_is_told_the_lessons_and_its_done_waits_for_the_leaf_probes(tmp_path, local_sandbox):
    """`--memory` and the task state's finish guard hold under lstc as in the default mode: the
    first planning request carries the stored lessons, and `done` before the report exists is
    refused without spending a gate round."""
    del local_sandbox  # only for its bubblewrap check
    memory = tmp_path / "memory"
    with LessonStore(memory) as store:
        store.add("gate-fix", "earlier", f"Write done into {REPORT}.", "end report.txt with \\n")
    requirements = [
        {
            "text": "report.txt says done",
            "probe": {"kind": "file_grep", "path": REPORT, "patterns": ["^done$"]},
        }
    ]
    write = [{"tool": "python", "input": f"open('{REPORT}', 'w').write('done\\n')"}]
    finish = [{"tool": "done", "input": "report written"}]
    responses = [
        {"text": json.dumps(requirements)},
        commit("Finish at once", finish),  # refused: r1's probe fails
        commit("Write the report", write),
        commit("Finish", finish),
        {"tool_calls": [{"name": "verdict", "input": {"passed": True, "gaps": []}}]},
    ]
    with FakeOpenAIServer(responses) as server:
        config = RunConfig(model="openai/qwen3-9b", control="lstc", memory_dir=str(memory))
        config.model_options.base_url, config.model_options.api_key = server.base_url, "test-key"
        config.sandbox.backend = "local"
        config.task_state.enabled = True
        config.lstc.abstraction = "lines"
        task = report_task(tmp_path, "lstc-memory")
        result = run_task(task, config, tmp_path / "run", resume=False)
        sent = prompts(server)
    assert result["status"] == "completed" and result["gate_rounds"] == 1, result
    assert "<lessons-from-earlier-runs>" in sent[1] and "end report.txt with" in sent[1]
    assert "finish is refused" in sent[2] and "report.txt says done" in sent[2]
    events = [
        json.loads(line)
        for line in (tmp_path / "run" / "trajectory.jsonl").read_text().splitlines()
    ]
    assert [e["requirements"] for e in events if e["event"] == "finish_refused"] == [["r1"]]
