"""WebArena task files through StateAct's own loader, suite discovery and dry run: every published
config lists with its blockers (a site not configured, a login missing, a reset in a parallel
run without the hook, the network), `--sites FILE` on the command line and as a run-config key,
bad input as one sentence."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from harness.apps.suite import run_suite
from harness.apps.suite_discovery import discover_tasks
from harness.cli import main as cli_main
from harness.kernel.core import StateActError
from harness.models.judge import ModelJudge
from harness.models.scripted import ScriptedModel
from harness.run.config import RunConfig
from tasks.schema import load_task
from tasks.support import dry_run_record
from tasks.webarena.deployment import Deployment, blockers, configure, use_judge
from tasks.webarena.scoring import score_webarena
from tasks.webarena.sites import SitesConfig
from tasks.webarena.start import reset_sites
from tasks.webarena.task import webarena_of

PUBLISHED = Path(__file__).parents[2] / "data" / "webarena" / "test.raw.json.gz"
SLICE = Path(__file__).parents[2] / "webarena_standin" / "tasks"
SITES = {
    "shopping": "http://shop.webarena.test:7770",
    "shopping_admin": "http://shop.webarena.test:7780/admin",
    "reddit": "http://forum.webarena.test:9999",
    "gitlab": "http://gitlab.webarena.test:8023",
    "map": "http://map.webarena.test:3000",
    "wikipedia": "http://wiki.webarena.test:8888",
    "homepage": "http://home.webarena.test:4399",
}


pytestmark = pytest.mark.usefixtures("fresh_deployment")


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("webarena")
    (folder / "test.raw.json").write_bytes(gzip.decompress(PUBLISHED.read_bytes()))
    return folder


def stateact(capsys, *args: str) -> SimpleNamespace:
    """The command line in this process (its own parsing, config files and error sentences)."""
    capsys.readouterr()
    code = cli_main(list(args))
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def test_a_webarena_file_loads_through_the_task_loader():
    task = load_task(SLICE / "188.json")
    assert task.id == "webarena-188"
    assert task.instruction.startswith("Tell me the total cost of my latest cancelled order?")
    assert [step.type for step in task.config] == ["launch", "launch", "webarena_start"]
    assert task.config[-1].parameters == {
        "sites": ["shopping"],
        "start_urls": ["__SHOPPING__"],
        "require_login": True,
        "require_reset": False,
    }
    assert webarena_of(task).eval.reference_answers == {"must_include": ["365.42"]}


def test_an_osworld_task_is_no_webarena_task(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"id": "t", "instruction": "Do it.", "source": "webarena"}))
    assert webarena_of(load_task(path)) is None


def test_the_published_list_file_is_one_task_per_item(published):
    paths = discover_tasks([published])
    assert len(paths) == 812 and paths[0].name == "test.raw.json#0"
    assert load_task(paths[811]).id == "webarena-811"
    with pytest.raises(StateActError, match="holds no task number 812"):
        load_task(published / "test.raw.json#812")


def test_every_published_task_lists_with_its_blockers(published):
    paths = discover_tasks([published])
    bare = [dry_run_record(p, None) for p in paths]
    assert not any(r["runnable"] for r in bare)
    assert all(any("is not configured (--sites FILE)" in x for x in r["reasons"]) for r in bare)
    configure_sites(published.parent / "all.yaml", {"sites": SITES})
    configured = [dry_run_record(p, None, network=True) for p in paths]
    assert not [r for r in configured if "broken task file" in r.get("reason", "")]
    runnable = [r for r in configured if r["runnable"]]
    judged = [r for r in configured if not r["runnable"]]
    assert len(runnable) + len(judged) == 812
    judge = "its answer is judged by a model (fuzzy_match): give one with --judge-model"
    assert all(r["reasons"] == [judge] for r in judged), judged[:3]
    assert (len(runnable), len(judged)) == (730, 82)
    use_judge(ModelJudge(ScriptedModel([])))
    assert all(dry_run_record(p, None, network=True)["runnable"] for p in paths)


def configure_sites(path: Path, data: dict, parallel: int = 1) -> None:
    path.write_text(yaml.safe_dump(data))
    configure(path, parallel)


def test_blockers_name_the_missing_site_login_and_reset(tmp_path):
    task = webarena_of(load_task(SLICE / "188.json"))
    only_forum = Deployment(sites=SitesConfig(sites={"reddit": SITES["reddit"]}))
    assert blockers(task, network=True, deployment=only_forum) == [
        "the WebArena site 'shopping' is not configured (--sites FILE)"
    ]
    no_account = Deployment(
        sites=SitesConfig(sites={"shopping": SITES["shopping"]}, default_accounts=False)
    )
    assert blockers(task, network=True, deployment=no_account) == [
        "no account to sign in to the WebArena site 'shopping' (accounts:)"
    ]
    honest = Deployment(sites=SitesConfig(sites={"shopping": SITES["shopping"]}))
    assert blockers(task, network=True, deployment=honest) == []
    assert blockers(task, network=False, deployment=honest)[0].startswith("needs the network")
    reset = task.model_copy(update={"require_reset": True})
    parallel = Deployment(sites=honest.sites, parallel=2)
    assert blockers(reset, network=True, deployment=parallel) == [
        "the task resets its site, which a parallel run cannot share without a reset_command"
    ]
    hooked = SitesConfig(sites={"shopping": SITES["shopping"]}, reset_command="true")
    assert blockers(reset, network=True, deployment=Deployment(sites=hooked, parallel=2)) == []
    assert blockers(reset, network=True, deployment=honest) == []  # one at a time: runs


def test_suite_dry_run_with_sites_on_the_command_line_and_in_a_run_config(tmp_path, capsys):
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": {"shopping": SITES["shopping"]}}))
    tasks = [str(SLICE / "188.json"), str(SLICE / "600.json")]
    listed = stateact(capsys, "suite", *tasks, "--dry-run", "--network", "--sites", str(sites))
    assert listed.returncode == 0, listed.stderr
    lines = {json.loads(x)["id"]: json.loads(x) for x in listed.stdout.splitlines()}
    assert lines["webarena-188"]["runnable"] is True
    assert lines["webarena-600"]["reasons"] == [
        "the WebArena site 'reddit' is not configured (--sites FILE)"
    ]
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"sites": str(sites), "network": True}))
    from_config = stateact(capsys, "suite", *tasks, "--dry-run", "--config", str(config))
    assert from_config.returncode == 0, from_config.stderr
    assert [json.loads(x)["runnable"] for x in from_config.stdout.splitlines()] == [True, False]
    without = stateact(capsys, "suite", *tasks, "--dry-run", "--network")
    assert all(not json.loads(x)["runnable"] for x in without.stdout.splitlines())


@pytest.mark.parametrize(
    "content, says",
    [
        ("sites: [1, 2", "cannot read the sites file"),
        ("sites: {shop: 'http://x.test'}", "unknown WebArena site 'shop'"),
        ("sites: {shopping: 'http://10.0.0.5:7770'}", "private address (10.0.0.5)"),
        ("sites: {shopping: 'ftp://x.test'}", "must be http(s)://HOST"),
    ],
)
def test_a_bad_sites_file_is_one_sentence(tmp_path, capsys, content, says):
    sites = tmp_path / "sites.yaml"
    sites.write_text(content)
    done = stateact(capsys, "suite", str(SLICE / "188.json"), "--dry-run", "--sites", str(sites))
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    missing = stateact(
        capsys, "run", str(SLICE / "188.json"), "--model", "script/x", "--sites", "nope.yaml"
    )
    assert missing.returncode == 2 and "cannot read the sites file nope.yaml" in missing.stderr


def test_scoring_without_a_sites_file_is_no_verdict():
    task = webarena_of(load_task(SLICE / "188.json"))
    verdict = score_webarena(task, None, "365.42", infeasible=False)
    assert verdict.failure == "a WebArena task needs the sites file (--sites FILE)"


def test_string_match_needs_no_browser_and_infeasible_answers_n_a(tmp_path):
    configure_sites(tmp_path / "s.yaml", {"sites": {"shopping": SITES["shopping"]}})
    task = webarena_of(load_task(SLICE / "188.json"))
    assert score_webarena(task, None, "It cost $365.42.", False).values["score"] == 1.0
    assert score_webarena(task, None, "754.99", False).values["score"] == 0.0
    assert score_webarena(task, None, "365.42", True).values["score"] == 0.0  # said N/A
    url_task = webarena_of(load_task(SLICE / "9001.json"))
    assert "need the live sandbox" in score_webarena(url_task, None, "", False).failure


def test_a_fuzzy_answer_is_judged_by_the_judge_model_with_webarenas_prompt(published, tmp_path):
    configure_sites(tmp_path / "s.yaml", {"sites": SITES})
    paths = discover_tasks([published])
    fuzzy = next(
        webarena_of(task)
        for task in map(load_task, paths)
        if isinstance(webarena_of(task).eval.reference_answers.get("fuzzy_match"), list)
        and webarena_of(task).eval.eval_types == ["string_match"]
    )
    assert "give one with --judge-model" in blockers(fuzzy, network=True)[0]
    model = ScriptedModel([{"text": "correct"}, {"text": "incorrect"}])
    use_judge(ModelJudge(model))
    assert blockers(fuzzy, network=True) == []
    references = fuzzy.eval.reference_answers["fuzzy_match"]
    assert score_webarena(fuzzy, None, "my answer", False).values["score"] == (
        1.0 if len(references) == 1 else 0.0
    )
    sent = model.calls[0]["messages"][0]["content"][0]["text"]
    assert fuzzy.intent in sent and references[0] in sent and "my answer" in sent
    assert model.calls[0]["tools"] == []


def test_the_reset_hook_runs_with_the_tasks_sites_and_a_failure_is_one_sentence(tmp_path):
    mark = tmp_path / "reset.txt"
    hooked = SitesConfig(
        sites={"shopping": SITES["shopping"]}, reset_command=f'echo "$WEBARENA_SITES" > {mark}'
    )
    reset_sites(hooked, ["shopping", "reddit"])
    assert mark.read_text() == "shopping,reddit\n"
    broken = SitesConfig(sites={}, reset_command="echo no database >&2; exit 3")
    with pytest.raises(StateActError, match=r"the reset_command failed \(exit 3\): no database"):
        reset_sites(broken, ["shopping"])


def test_a_parallel_suite_refuses_a_reset_task_without_the_hook_and_runs_it_with_it(tmp_path):
    task = json.loads((SLICE / "9002.json").read_text())
    task["require_reset"] = True
    path = tmp_path / "reset.json"
    path.write_text(json.dumps(task))
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": {"shopping": "http://127.0.0.1:9"}}))
    config = RunConfig(model="script/none", sites=str(sites))
    config.sandbox.network, config.sandbox.network_mode = True, "webarena-unused"
    run_suite([path], config, tmp_path / "out", parallel=2)  # refused before any sandbox
    (line,) = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert line["status"] == "unsupported" and "reset_command" in line["error"], line
    sites.write_text(
        yaml.safe_dump({"sites": {"shopping": "http://127.0.0.1:9"}, "reset_command": "true"})
    )
    assert (
        blockers(webarena_of(load_task(path)), network=True, deployment=configure(sites, 2)) == []
    )


def test_judge_model_on_the_command_line_unblocks_a_fuzzy_task(tmp_path, capsys, published):
    item = next(
        t
        for t in json.loads((published / "test.raw.json").read_text())
        if isinstance((t["eval"]["reference_answers"] or {}).get("fuzzy_match"), list)
    )
    task = tmp_path / "fuzzy.json"
    task.write_text(json.dumps(item))
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": SITES}))
    script = tmp_path / "judge.json"
    script.write_text(json.dumps([{"text": "correct"}]))
    base = ["suite", str(task), "--dry-run", "--network", "--sites", str(sites)]
    blocked = stateact(capsys, *base)
    assert "give one with --judge-model" in json.loads(blocked.stdout)["reason"]
    judged = stateact(capsys, *base, "--judge-model", f"script/{script}")
    assert judged.returncode == 0 and json.loads(judged.stdout)["runnable"] is True, judged
    alone = stateact(capsys, "suite", str(task), "--dry-run", "--judge-model", f"script/{script}")
    assert alone.returncode == 2 and "--judge-model also with --sites" in alone.stderr
