"""The oracle on WebArena tasks without a sandbox: which solution file it plays, the sites'
placeholders resolved, one sentence for each bad solution, and one script answering both the main
agent and the web specialist (the slice runs it end to end: test_webarena_slice.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from harness.apps.oracle import oracle_model
from harness.apps.oracle_web import WebOracle, load_web_solution, web_solution_path
from harness.kernel.core import StateActError
from tasks.schema import load_task
from tasks.webarena.deployment import configure

pytestmark = pytest.mark.usefixtures("fresh_deployment")

SLICE = Path(__file__).parents[2] / "webarena_standin" / "tasks"
MAIN_TOOLS = [SimpleNamespace(name=n) for n in ("bash", "delegate", "finish")]
WEB_TOOLS = [SimpleNamespace(name=n) for n in ("navigate", "fill", "click", "report")]


def sites(tmp_path) -> None:
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"sites": {"shopping": "http://127.0.0.1:7770"}}))
    configure(str(path), 1)


def names(turns: list[dict]) -> list[str]:
    return [turn["tool_calls"][0]["name"] for turn in turns]


def test_the_right_and_wrong_solutions_resolve_the_sites(tmp_path):
    sites(tmp_path)
    task = load_task(SLICE / "188.json")
    right = load_web_solution(web_solution_path(task))
    wrong = load_web_solution(web_solution_path(task, "wrong"))
    assert right.steps[0].input["url"] == "http://127.0.0.1:7770/sales/order/history/"
    assert (right.answer, wrong.answer) == ("365.42", "754.99")


def test_one_script_answers_the_main_agent_and_the_web_specialist(tmp_path):
    sites(tmp_path)
    oracle = WebOracle(load_web_solution(web_solution_path(load_task(SLICE / "9001.json"))))
    assert names(oracle.main) == ["delegate", "bash", "bash", "finish"]
    assert names(oracle.web) == ["navigate", "fill", "click", "report"]
    played = [{"role": "assistant", "content": []}] * 2
    assert oracle("s", played, WEB_TOOLS) == oracle.web[2]
    assert oracle("s", played, MAIN_TOOLS) == oracle.main[2]
    assert oracle("s", played * 9, MAIN_TOOLS) == oracle.main[-1]  # asked again: finish again


def test_the_oracle_model_of_a_webarena_task_plays_its_solution(tmp_path):
    sites(tmp_path)
    model = oracle_model(load_task(SLICE / "9002.json"))
    reply = model.complete("s", [{"role": "user", "content": []}], MAIN_TOOLS)
    assert reply.content[-1]["name"] == "delegate" and model.name == "script/oracle"
    finish = model.turns[0].main[-1]["tool_calls"][0]["input"]
    assert finish == {"summary": "Game card case for Nintendo Switch"}


def copied_task(tmp_path, solution: str | None) -> Path:
    folder = tmp_path / "suite"
    (folder / "tasks").mkdir(parents=True)
    (folder / "solutions").mkdir()
    data = json.loads((SLICE / "9002.json").read_text())
    (folder / "tasks" / "9002.json").write_text(json.dumps(data))
    if solution is not None:
        (folder / "solutions" / "webarena-9002.json").write_text(solution)
    return folder / "tasks" / "9002.json"


@pytest.mark.parametrize(
    ("solution", "message"),
    [
        (None, "has no reference solution for task webarena-9002"),
        ("{not json", "is not valid"),
        ('{"steps": [{"tool": ""}]}', "is not valid"),
        ('{"steps": [], "answer": "x", "extra": 1}', "is not valid"),
        ('{"steps": "navigate"}', "is not valid"),
    ],
)
def test_a_bad_or_missing_solution_is_one_sentence(tmp_path, solution, message):
    sites(tmp_path)
    task = load_task(copied_task(tmp_path, solution))
    with pytest.raises(StateActError, match=message) as caught:
        oracle_model(task)
    assert "\n" not in str(caught.value)


def test_the_wrong_oracle_of_a_task_without_a_wrong_variant_answers_nothing(tmp_path):
    sites(tmp_path)
    task = load_task(copied_task(tmp_path, '{"steps": [], "answer": "x"}'))
    model = oracle_model(task, "wrong")
    oracle = model.turns[0]
    assert oracle.main[-1]["tool_calls"][0]["input"] == {"summary": ""}


def test_a_solution_needs_the_sites(tmp_path):
    with pytest.raises(StateActError, match="give them \\(--sites FILE\\)"):
        oracle_model(load_task(SLICE / "188.json"))


def test_a_task_id_that_leaves_the_solutions_folder_names_no_solution(tmp_path):
    task = load_task(copied_task(tmp_path, "{}"))
    escaped = task.model_copy(update={"id": "../tasks/9002"})
    assert web_solution_path(escaped) is None
