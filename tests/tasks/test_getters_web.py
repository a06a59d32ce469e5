"""The web getters (active_tab_html_parse, url_path_parse, info_from_website) and
content_from_vm_file, offline.

tests/osworld_cases/getters/*.json hold differential cases: OSWorld's own getter functions were run
(outside this project) on a fake browser page described by `page` (what each selector finds) and
their values recorded under `osworld`. Here the sandbox script's page reads run on the same fake
page and tasks/html_parse.py assembles the value, which must be OSWorld's.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import openpyxl
import pytest

from harness.kernel.core import StateActError
from tasks.getters import GetterContext, RootDirSource, run_getter
from tasks.getters.web import url_path_values
from tasks.html_parse import assemble, from_answers, queries
from tasks.schema import Task

CASES = Path(__file__).parents[1] / "osworld_cases" / "getters"
HTML_CASES = json.loads((CASES / "html_parse.json").read_text())
URL_CASES = json.loads((CASES / "url_path_parse.json").read_text())


def sandbox_script():
    """tasks/sandbox_scripts/chrome_cdp.py as a module (its reads are tested on fake pages)."""
    path = Path(__file__).parents[2] / "tasks" / "sandbox_scripts" / "chrome_cdp.py"
    spec = importlib.util.spec_from_file_location("chrome_cdp_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = sandbox_script()


class FakeElement:
    def __init__(self, data: dict):
        self.data = data

    def text_content(self, timeout: float | None = None):
        return self.data.get("text")

    def inner_text(self, timeout: float | None = None):
        return self.data.get("text")

    def input_value(self, timeout: float | None = None):
        return self.data.get("value", "")

    def evaluate(self, script: str):
        assert "TEXT_NODE" in script
        return [text.strip() for text in self.data.get("direct", []) if text.strip()]

    def query_selector(self, child: str):
        text = self.data.get(child)
        return None if text is None else FakeElement({"text": text})


class FakeLocator:
    def __init__(self, items: list):
        self.items = items

    def count(self) -> int:
        return len(self.items)

    @property
    def first(self) -> FakeElement:
        return FakeElement(self.items[0])


class FakePage:
    """A page as the differential case describes it: what each selector finds."""

    def __init__(self, model: dict):
        self.model, self.url = model, model["url"]

    def wait_for_load_state(self, state: str, timeout: float) -> None:
        pass

    def is_closed(self) -> bool:
        return False

    def query_selector_all(self, selector: str) -> list:
        return [FakeElement(d) for d in self.model["elements"].get(selector, [])]

    def locator(self, selector: str) -> FakeLocator:
        return FakeLocator(self.model["locators"].get(selector, []))


class FakeBrowser:
    def __init__(self, page: FakePage):
        self.contexts = [type("Context", (), {"pages": [page]})()]


@pytest.mark.parametrize("case", HTML_CASES, ids=[c["id"] for c in HTML_CASES])
def test_active_tab_html_parse_gives_osworlds_value(case):
    page = FakePage(case["page"])
    found = SCRIPT.tab_at(FakeBrowser(page), case["address"], 0)
    if found is None:
        assert case["osworld"] == {}
        return
    answers = [SCRIPT.answer(found, kind, sel, 0) for kind, sel in queries(case["spec"])]
    assert from_answers(case["spec"], answers, found.url) == case["osworld"]


@pytest.mark.parametrize("case", URL_CASES, ids=[c["id"] for c in URL_CASES])
def test_url_path_parse_gives_osworlds_value(case):
    assert url_path_values(case["address"], case["spec"]["parse_keys"]) == case["osworld"]


def test_html_parse_asks_each_page_read_once_and_checks_its_spec():
    spec = {
        "category": "class",
        "class_multiObject": {"a": {"0": "x", "1": "y"}},
        "class_multiObject_search_exist": {"a": ["x"]},
        "class_singleObject": {"b": "z"},
    }
    assert queries(spec) == [("texts", ".a"), ("texts", ".b")]
    with pytest.raises(StateActError, match="the page answered a different number"):
        from_answers(spec, [[]], "")
    with pytest.raises(StateActError, match="'category' must be one of"):
        queries({"category": "css"})
    with pytest.raises(StateActError, match="'xpathObject' must be an object"):
        assemble({"category": "xpath", "xpathObject": ["//a"]}, lambda k, s: "", "")


def offline_context(tmp_path: Path) -> GetterContext:
    task = Task.model_validate({"id": "t", "instruction": "x", "evaluator": {"func": "x"}})
    (tmp_path / "root").mkdir(exist_ok=True)
    return GetterContext(task, RootDirSource(tmp_path / "root"), None, tmp_path / "work")


def test_live_getters_refuse_bad_specs_and_need_a_live_sandbox(tmp_path):
    ctx = offline_context(tmp_path)
    bad = [
        ({"type": "url_path_parse"}, "needs a 'parse_keys' list"),
        ({"type": "info_from_website", "url": "https://x.org"}, "'infos' list"),
        (
            {"type": "info_from_website", "url": "u", "infos": [{"action": "hover"}]},
            "an action among inner_text",
        ),
        (
            {"type": "info_from_website", "url": "u", "infos": [{"action": "click_and_attribute"}]},
            "a click_and_attribute info needs a non-empty list of selectors",
        ),
        ({"type": "vscode_config", "path": "/home/user/x.txt"}, "'vscode_extension_command'"),
        ({"type": "pdf_from_url", "dest": "gold.pdf"}, "needs a 'path' URL"),
    ]
    for spec, message in bad:
        with pytest.raises(StateActError, match=message):
            run_getter(spec, ctx)
    for kind in ("active_tab_html_parse", "vlc_playing_info"):
        with pytest.raises(StateActError, match="needs a live sandbox"):
            run_getter({"type": kind, "category": "class"}, ctx)
    # info_from_website falls back to the task's backups when no page can be read, as OSWorld's.
    spec = {"type": "info_from_website", "url": "u", "infos": [], "backups": ["kept"]}
    assert run_getter(spec, ctx) == ["kept"]


def test_content_from_vm_file_gives_the_last_row_as_pandas_prints_it(tmp_path):
    ctx = offline_context(tmp_path)
    desktop = tmp_path / "root" / "home" / "user" / "Desktop"
    desktop.mkdir(parents=True)
    book = openpyxl.Workbook()
    for row in (["Name", "Citations", "h"], ["Ann", 120, 7.5], ["Bob", None, 3]):
        book.active.append(row)
    book.save(desktop / "researchers.xlsx")
    spec = {
        "type": "content_from_vm_file",
        "path": "/home/user/Desktop/researchers.xlsx",
        "file_type": "xlsx",
        "file_content": "last_row",
    }
    got = run_getter(spec, ctx)
    # An empty cell is NaN, which pandas 2's astype(str) may keep as a float: either way "nan".
    assert [str(value) for value in got] == ["Bob", "nan", "3.0"]
    assert run_getter({**spec, "path": "/home/user/none.xlsx"}, ctx) is None
    (desktop / "bad.xlsx").write_text("not a workbook")
    with pytest.raises(StateActError, match="not a readable xlsx"):
        run_getter({**spec, "path": "/home/user/Desktop/bad.xlsx"}, ctx)
    with pytest.raises(StateActError, match="last_row only"):
        run_getter({**spec, "file_type": "csv"}, ctx)
