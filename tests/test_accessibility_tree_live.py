"""The accessibility_tree getter in the desktop: OSWorld's XML format (namespaced states and
object attributes) read by check_accessibility_tree's CSS selectors and XPath, on a Thunderbird
started as OSWorld's tasks start it (Gecko exposes its tree only once the session's
accessibility is on, which the dump turns on as OSWorld's GNOME VM has it)."""

from __future__ import annotations

import time

import pytest
from lxml import etree

from sandboxes import SandboxConfig, open_sandbox
from tasks.getters import GetterContext, SandboxSource, run_getter
from tasks.metrics.app_configs import A11Y_NS, check_accessibility_tree
from tests.conftest import require_image
from tests.test_osworld_apps_live import ENV, TASK

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]


def test_thunderbirds_tree_answers_css_selectors_over_namespaced_attributes(tmp_path):
    require_image("desktop")
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=4096)) as box:
        code, out = box.exec(["stateact-desktop", "start", "1280x720"], timeout=120)
        assert code == 0, out
        box.exec(["bash", "-c", ENV + "(thunderbird >/dev/null 2>&1 &)"], timeout=30)
        ctx = GetterContext(TASK, SandboxSource(box), None, tmp_path / "work")
        rules = [{"selectors": ['application[name=Thunderbird] frame[st|showing="true"]']}]
        deadline, tree = time.monotonic() + 120, ""
        while check_accessibility_tree(tree, rules) == 0.0:
            assert time.monotonic() < deadline, f"no Thunderbird in the tree: {tree[:500]}"
            time.sleep(3)
            tree = run_getter({"type": "accessibility_tree"}, ctx)
        root = etree.fromstring(tree.encode())
        assert root.tag == "desktop-frame" and root.nsmap["attr"] == A11Y_NS["attr"]
        # Gecko's object attributes (its DOM tag) and the on-screen box, as OSWorld's dump has.
        tagged = [{"selectors": ["application[name=Thunderbird] [attr|tag][cp|size]"]}]
        assert check_accessibility_tree(tree, tagged) == 1.0
        xpath = [{"xpath": "//application[@name='Thunderbird']//*[@st:visible='true']"}]
        assert check_accessibility_tree(tree, xpath) == 1.0
        assert check_accessibility_tree(tree, [{"selectors": ["application[name=Nope]"]}]) == 0.0
