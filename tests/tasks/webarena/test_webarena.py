"""WebArena: the published task configs load, the dry run names their blockers, and the evaluators
give WebArena's own verdicts on every differential case (`tests/webarena_cases/`)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.webarena.evaluators import evaluate_task, program_html, string_match, url_match
from tasks.webarena.schema import is_webarena_task, load_webarena_tasks, parse_webarena_task
from tasks.webarena.sites import SitesConfig, load_sites, task_blockers

CASES = Path(__file__).parents[2] / "webarena_cases"
PUBLISHED = Path(__file__).parents[2] / "data" / "webarena" / "test.raw.json.gz"


def _cases(name: str) -> dict:
    return json.loads((CASES / f"{name}.json").read_text())


def _sites(data: dict) -> SitesConfig:
    # The cases' sites are on made-up .test hosts; nothing is contacted.
    return SitesConfig(sites=data["sites"])


class ScriptedJudge:
    def __init__(self, reply: str):
        self.reply, self.messages = reply, None

    def complete(self, system: str, user: str) -> str:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self.reply


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    path = tmp_path_factory.mktemp("webarena") / "test.raw.json"
    path.write_bytes(gzip.decompress(PUBLISHED.read_bytes()))
    return path


def test_every_published_task_loads(published):
    tasks = load_webarena_tasks(published)
    assert len(tasks) == 812
    assert all(is_webarena_task(task.model_dump()) for task in tasks)
    assert tasks[0].id == "webarena-0" and tasks[0].start_urls == ["__SHOPPING_ADMIN__"]
    assert sum(len(task.start_urls) > 1 for task in tasks) == 5  # ` |AND| ` opens several tabs


def test_dry_run_blockers_for_every_published_task(published):
    tasks = load_webarena_tasks(published)
    nothing = [task_blockers(task, None) for task in tasks]
    assert all(blockers for blockers in nothing)
    assert "the WebArena site 'shopping_admin' is not configured (--sites FILE)" in nothing[0]
    everything = SitesConfig(
        sites={
            name: f"http://{name.replace('_', '-')}.test" for name in _cases("url_match")["sites"]
        }
    )
    assert all(task_blockers(task, everything) == [] for task in tasks)
    resets = [task for task in tasks if task.require_reset]
    assert all(
        "reset_command" in " ".join(task_blockers(task, everything, parallel=4)) for task in resets
    )


def test_string_match_equals_webarena():
    data = _cases("string_match")
    sites = _sites(data)
    tasks = {
        t["task_id"]: parse_webarena_task(json.loads(sites.resolve(json.dumps(t))), "case")
        for t in data["tasks"]
    }
    wrong = []
    for case in data["cases"]:
        judge = ScriptedJudge(case["judge_reply"]) if "judge_reply" in case else None
        verdict = string_match(tasks[case["task_id"]], case["answer"], judge)
        if verdict != case["verdict"]:
            wrong.append((case["task_id"], case["answer"], verdict))
        elif "judge_messages" in case and judge.messages != case["judge_messages"]:
            wrong.append((case["task_id"], case["answer"], "judge messages differ"))
    assert not wrong, wrong[:5]
    assert len(data["cases"]) == 2530
    assert sum("judge_reply" in case for case in data["cases"]) > 500


def test_url_match_equals_webarena():
    data = _cases("url_match")
    tasks = {t["task_id"]: parse_webarena_task(t, "case") for t in data["tasks"]}
    sites = _sites(data)
    wrong = [
        (case["task_id"], case["page_url"])
        for case in data["cases"]
        if url_match(tasks[case["task_id"]], case["page_url"], sites.resolve) != case["verdict"]
    ]
    assert not wrong, wrong[:5]
    assert len(data["cases"]) == 1640


class RoutedPage:
    """A Playwright page on Debian's Chromium whose requests are answered from `pages` (as the
    cases were computed): the evaluators' `Page`."""

    def __init__(self, browser, pages: dict[str, str]):
        self.page = browser.new_page()
        self.page.route(
            "**/*",
            lambda route: route.fulfill(
                status=200 if route.request.url in pages else 404,
                content_type="text/html",
                body=pages.get(route.request.url, "<html>no</html>"),
            ),
        )

    @property
    def url(self) -> str:
        return self.page.url

    def goto(self, url: str) -> None:
        self.page.goto(url)

    def content(self) -> str:
        return self.page.content()

    def evaluate(self, script: str):
        from playwright.sync_api import Error

        try:
            return self.page.evaluate(script)
        except Error as exc:
            raise StateActError(f"the page's script failed: {exc.message}") from None


@pytest.fixture(scope="module")
def chromium():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (make host-tools)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


def test_program_html_equals_webarena(chromium):
    data = _cases("program_html")
    for case in data["cases"]:
        page = RoutedPage(chromium, data["pages"])
        page.goto(case["last_url"])
        task = parse_webarena_task(
            {
                "task_id": case["name"],
                "sites": ["shopping"],
                "start_url": "__SHOPPING__",
                "intent": "check",
                "eval": {"eval_types": ["program_html"], "program_html": case["targets"]},
            },
            "case",
        )
        assert program_html(task, page) == case["verdict"], case["name"]
        page.page.close()


def _task(**eval_fields) -> dict:
    return {
        "task_id": 1,
        "sites": ["reddit"],
        "start_url": "__REDDIT__",
        "intent": "What is it?",
        "eval": {"eval_types": ["string_match"], **eval_fields},
    }


def test_func_expressions_are_parsed_never_evaluated():
    from tasks.webarena.evaluators import call_helper

    for hostile in [
        "__import__('os').system('touch /tmp/pwned')",
        "reddit_get_post_url(open('/etc/passwd').read())",
        "reddit_get_post_url('x') or 1",
        "exec('1')",
    ]:
        with pytest.raises(StateActError):
            call_helper(hostile, page=None, helpers=None)
    assert not Path("/tmp/pwned").exists()
    assert call_helper("reddit_get_post_url('http://f.test/f/a/1/x')", None, None) == (
        "http://f.test/f/a/1/"
    )


def test_bad_inputs_get_one_sentence(tmp_path):
    with pytest.raises(StateActError, match="is not a WebArena task: eval"):
        parse_webarena_task({"task_id": 1, "sites": [], "start_url": "x", "intent": "y"}, "t.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(StateActError, match="cannot read the WebArena task file"):
        load_webarena_tasks(bad)
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  shop: http://x.test\n")
    with pytest.raises(StateActError, match="unknown WebArena site 'shop'"):
        load_sites(sites)
    sites.write_text("shopping: http://10.0.0.5:7770\n")
    with pytest.raises(StateActError, match="private address"):
        load_sites(sites)
    sites.write_text("shopping: ftp://x.test\n")
    with pytest.raises(StateActError, match="must be http"):
        load_sites(sites)
    sites.write_text("sites:\n  shopping: http://10.0.0.5:7770\nallow_private_addresses: true\n")
    assert load_sites(sites).resolve("__SHOPPING__/a") == "http://10.0.0.5:7770/a"
    judged = parse_webarena_task(_task(reference_answers={"fuzzy_match": ["x"]}), "t")
    with pytest.raises(StateActError, match="judged by a model"):
        string_match(judged, "x")
    with pytest.raises(StateActError, match="neither correct nor incorrect"):
        string_match(judged, "x", ScriptedJudge("maybe"))
    with pytest.raises(StateActError, match="needs the browser's page"):
        evaluate_task(
            parse_webarena_task({**_task(), "eval": {"eval_types": ["url_match"]}}, "t"), "", None
        )


def test_sites_file_placeholders_and_accounts(tmp_path):
    sites = tmp_path / "sites.json"
    sites.write_text(
        json.dumps(
            {
                "sites": {
                    "shopping": "http://shop.test:7770/",
                    "shopping_admin": "http://a.test/admin",
                },
                "accounts": {"shopping": {"username": "me", "password": "pw"}},
            }
        )
    )
    config = load_sites(sites)
    assert config.resolve("__SHOPPING_ADMIN__/x |OR| __SHOPPING__/y") == (
        "http://a.test/admin/x |OR| http://shop.test:7770/y"
    )
    assert config.unresolved("__GITLAB__/a") == ["__GITLAB__"]
    assert config.account("shopping").username == "me"
    assert config.account("reddit").username == "MarvelsGrantMan136"  # WebArena's published one
