"""The bundled WebArena slice end to end: WebArena-format tasks (`tests/webarena_standin/tasks/`)
against stand-in sites on 127.0.0.1, run through the real suite runner in desktop sandboxes
(the host's network, so the sandbox reaches the stand-ins on loopback), with scripted agents
that drive the desktop's browser through the web specialist and answer with `finish`: the
oracle (`--model script/oracle`, `script/oracle-wrong`) plays each task's solution in
`tests/webarena_standin/solutions/`.

The right work scores 1 and the wrong work 0 on every evaluator (string_match's must_include and
exact_match, url_match, program_html); a do-nothing agent scores 0; the login forms are filled
once per site and the cached state reused; the AND/OR mode completes one task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.apps.oracle_web import WebOracle, WebSolution, load_web_solution, web_solution_path
from harness.apps.suite import run_suite
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from tasks.schema import load_task
from tasks.webarena.deployment import configure
from tests.conftest import require_image
from tests.control_helpers import RoutedModel, call
from tests.webarena_standin.sites import forum, shop

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]

SLICE = Path(__file__).parents[2] / "webarena_standin" / "tasks"
BOOKS_QUESTION = "what is the best book of the year"


REWRITE = (
    f"document.querySelector('.submission__title').textContent = '{BOOKS_QUESTION}'; 'rewritten'"
)


def oracle_of(task_id: str, variant: str = "right") -> WebOracle:
    """The suite's solution of the task (`tests/webarena_standin/solutions/`), as the oracle plays
    it; the sites must be configured (slice_config)."""
    task = load_task(SLICE / f"{task_id}.json")
    return WebOracle(load_web_solution(web_solution_path(task, variant)))


@pytest.fixture(scope="module")
def standins():
    require_image("desktop")
    sites = {"shop": shop(), "forum": forum()}
    yield sites
    for site in sites.values():
        site.close()


def slice_config(tmp_path: Path, standins: dict) -> RunConfig:
    sites_file = tmp_path / "sites.yaml"
    sites = {"shopping": standins["shop"].url, "reddit": standins["forum"].url}
    sites_file.write_text(yaml.safe_dump({"sites": sites}))
    config = RunConfig(model="script/test", sites=str(sites_file), cache_dir=str(tmp_path / "c"))
    config.sandbox.image = "desktop"
    config.sandbox.network = True  # host mode: the stand-ins listen on the host's 127.0.0.1
    config.subagents.enabled = ["web"]
    configure(config.sites, 1, config.cache_dir)
    return config


def run_slice(tmp_path: Path, config: RunConfig, variant: str, names: list[str]) -> dict:
    """The tasks played by the oracle (`right`, `wrong`) or by an agent that does nothing and
    answers nothing (`idle`)."""
    out = tmp_path / variant
    factories = {}
    if variant == "idle":
        idle, verdict = WebOracle(WebSolution()), call("verdict", passed=True, gaps=[])
        factories = {
            "model_factory": lambda task: ScriptedModel([idle] * 12),
            "gate_model_factory": lambda task: ScriptedModel([verdict] * 3),
        }
    else:
        oracle = "script/oracle-wrong" if variant == "wrong" else "script/oracle"
        config = config.model_copy(update={"model": oracle})
    run_suite([SLICE / f"{name}.json" for name in names], config, out, **factories)
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {line["task_id"]: line for line in lines}


ALL = ["188", "9001", "600", "9002", "436"]


def test_right_answers_score_1_and_the_login_state_is_reused(tmp_path, standins):
    config = slice_config(tmp_path, standins)
    results = run_slice(tmp_path, config, "right", ALL)
    assert {k: (r["score"], r["status"]) for k, r in results.items()} == {
        f"webarena-{name}": (1.0, "completed") for name in ALL
    }, results
    # program_html's pages were read by a browser of the observer's uid, not the agent's (1000)
    judged = {m["name"]: m["inputs"] for m in results["webarena-600"]["metrics"]}
    assert judged["program_html"]["observer_uid"] == 2999, judged
    shop_logins = standins["shop"].site.requests[("POST", "/customer/account/login/")]
    forum_logins = standins["forum"].site.requests[("POST", "/login")]
    # two require_login shop tasks, one login through the form: the second reused the state
    assert (shop_logins, forum_logins) == (1, 1)
    assert list((tmp_path / "c" / "webarena-auth").glob("shopping-*.json"))


def test_wrong_answers_score_0(tmp_path, standins):
    config = slice_config(tmp_path, standins)
    wrong = run_slice(tmp_path, config, "wrong", ALL)
    assert {k: r["score"] for k, r in wrong.items()} == {f"webarena-{n}": 0.0 for n in ALL}
    assert all(r["status"] == "completed" for r in wrong.values()), wrong


def test_doing_nothing_scores_0(tmp_path, standins):
    config = slice_config(tmp_path, standins)
    idle = run_slice(tmp_path, config, "idle", ["188", "9001", "600", "436"])
    assert {k: r["score"] for k, r in idle.items()} == {
        f"webarena-{n}": 0.0 for n in ["188", "9001", "600", "436"]
    }, idle


def andor_planner(system, text):
    """The AND/OR planner: one web action under the root, checked done by its report."""
    if "plan one node" in system:
        return {
            "type": "and",
            "children": [
                {"goal": "Search the shop for game card case", "type": "action", "agent": "web"}
            ],
        }
    if "candidate table" in system:
        return {"constraints": [], "needed": 0, "candidates": []}
    if "just succeeded" in system:
        return {"prune": [], "rewrite": {}}
    if "Decide whether the node" in system:
        return {"done": True, "reason": "the search results page is open"}
    raise AssertionError(f"unexpected planner request: {system[:80]}")


def test_the_andor_mode_completes_a_task_through_the_web_specialist(tmp_path, standins):
    config = slice_config(tmp_path, standins)
    config.control = "andor"
    out = tmp_path / "andor"
    run_suite(
        [SLICE / "9001.json"],
        config,
        out,
        model_factory=lambda task: RoutedModel(andor_planner, oracle_of("9001")),
        gate_model_factory=lambda task: ScriptedModel([call("verdict", passed=True, gaps=[])]),
    )
    (line,) = [json.loads(row) for row in (out / "results.jsonl").read_text().splitlines()]
    assert (line["score"], line["status"], line["control"]) == (1.0, "completed", "andor"), line
    run_dir = next(p for p in out.rglob("trajectory.jsonl")).parent
    events = [json.loads(row) for row in (run_dir / "trajectory.jsonl").read_text().splitlines()]
    assert [e["specialist"] for e in events if e["event"] == "delegation"] == ["web"]


def test_a_page_rewritten_in_the_agents_browser_is_not_judged(tmp_path, standins):
    """Task 601 checks the agent's end page (`url: "last"`). An agent that posts the wrong
    question and then rewrites the title in its own tab would pass a check that reads its live
    page; the observer's fresh browser loads what the forum stored. The honest twin passes."""
    config = slice_config(tmp_path, standins)

    def attacker(task):
        agent = oracle_of("601", "wrong")
        agent.web = [*agent.web[:-1], call("run_js", code=REWRITE), agent.web[-1]]
        return RoutedModel(lambda system, text: {}, agent)

    def gate(task):
        return ScriptedModel([call("verdict", passed=True, gaps=[])])

    for name, factory in (
        ("attack", attacker),
        ("honest", lambda task: RoutedModel(lambda s, t: {}, oracle_of("601"))),
    ):
        run_suite(
            [SLICE / "601.json"],
            config,
            tmp_path / name,
            model_factory=factory,
            gate_model_factory=gate,
        )
    attack, honest = (
        json.loads((tmp_path / name / "results.jsonl").read_text().splitlines()[0])
        for name in ("attack", "honest")
    )
    assert (attack["score"], attack["status"]) == (0.0, "completed"), attack
    assert (honest["score"], honest["status"]) == (1.0, "completed"), honest
    run_js = [
        json.loads(row)
        for row in next((tmp_path / "attack").rglob("trajectory.jsonl")).read_text().splitlines()
        if "rewritten" in row
    ]
    assert run_js, "the attack's script ran in the agent's browser"
