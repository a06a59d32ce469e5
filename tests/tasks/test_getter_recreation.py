"""gotoRecreationPage_and_get_html_content: the getter's request and answer offline, and its
page flow (search, highlighted result in a new tab, Next Available, class text) in the desktop's
Chrome on test pages that Playwright's route serves for recreation.gov's addresses inside the
sandbox (the sandbox has no network; every other request is aborted)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.getters import run_getter
from tasks.metrics.general import check_direct_json_object
from tests.desktop_helpers import ENV
from tests.tasks.test_getters_desktop import context

PAGES = Path(__file__).parents[1] / "data" / "recreation"
CHROME_CDP = Path(__file__).parents[2] / "tasks" / "sandbox_scripts" / "chrome_cdp.py"
SPEC = {
    "type": "gotoRecreationPage_and_get_html_content",
    "selector": "class",
    "class": "camp-sortable-column-header",
    "order": "2",
}


def test_the_getter_asks_chrome_for_the_scripted_visit_and_hands_back_its_value(tmp_path):
    answer = {"expected": {"camp-sortable-column-header": "Jun 12 - Jun 14"}, "url": "u"}
    ctx = context(tmp_path, {"python3 -c": {"output": json.dumps(answer), "returncode": 0}})
    assert run_getter(SPEC, ctx) == {"expected": answer["expected"]}
    request = json.loads(shlex.split(ctx.source.commands[-1])[-1])
    assert request["op"] == "recreation" and request["search"] == "Diamond"
    assert request["class"] == "camp-sortable-column-header" and request["order"] == 2
    assert request["start_chrome"] is True  # OSWorld starts Chrome when the agent closed it


def test_bad_specs_and_a_failed_visit_are_reasons(tmp_path):
    ctx = context(tmp_path)
    for spec, message in (
        ({**SPEC, "selector": "id"}, "needs selector 'class'"),
        ({**SPEC, "class": ""}, "needs selector 'class'"),
        ({**SPEC, "order": "second"}, "'order' must be a number"),
    ):
        with pytest.raises(StateActError, match=message):
            run_getter(spec, ctx)
    failed = {
        "output": "recreation.gov could not be opened at any of its addresses",
        "returncode": 1,
    }
    with pytest.raises(StateActError, match="could not be opened"):
        run_getter(SPEC, context(tmp_path, {"python3 -c": failed}))


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.desktop
def test_the_page_flow_on_served_recreation_pages_in_the_desktop_chrome(tmp_path):
    from sandboxes import SandboxConfig, open_sandbox
    from tests.conftest import require_image

    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=4096)) as box:
        code, out = box.exec(["stateact-desktop", "start", "1280x720"], timeout=120)
        assert code == 0, out
        folder = "/tmp/recreation-test"
        for path in [*PAGES.iterdir(), CHROME_CDP]:
            box.copy_in(path, f"{folder}/{path.name}")

        def visit(search: str, order: int | None = 2) -> dict:
            request = {"op": "recreation", "search": search, "order": order, "timeout_s": 20}
            request |= {"class": SPEC["class"], "start_chrome": True, "wait_s": 5}
            command = f"python3 {folder}/routed_cdp.py {folder} {shlex.quote(json.dumps(request))}"
            code, out = box.exec(["bash", "-c", ENV + command], timeout=240)
            assert code == 0, out[-1500:]
            return json.loads(out.strip().splitlines()[-1])

        found = visit("Diamond")
        assert found["served"] == ["/", "/search", "/camping/campgrounds/233123"]
        assert found["url"] == "https://www.recreation.gov/camping/campgrounds/233123"
        # The third header after Next Available, stripped, as OSWorld reads it.
        assert found["expected"] == {"camp-sortable-column-header": "Jun 12 - Jun 14"}
        rules = {"expected": found["expected"]}
        assert check_direct_json_object({"camp-sortable-column-header": "Jun 12 - Jun 14"}, rules)
        assert visit("Diamond", order=None)["expected"] == {"camp-sortable-column-header": "Site"}
        missing = visit("Diamond", order=7)["expected"]
        assert missing == {"camp-sortable-column-header": "__EVALUATION_FAILED__"}
        assert (
            check_direct_json_object({"camp-sortable-column-header": "x"}, {"expected": missing})
            == 0
        )
