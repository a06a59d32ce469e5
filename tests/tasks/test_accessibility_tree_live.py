"""The accessibility_tree getter in the desktop: OSWorld's XML format (namespaced states and
object attributes) read by check_accessibility_tree's CSS selectors and XPath, on a Thunderbird
started as OSWorld's tasks start it (Gecko exposes its tree only once the session's
accessibility is on, which the dump turns on as OSWorld's GNOME VM has it)."""

from __future__ import annotations

import json
import shlex
import time

import pytest
from lxml import etree

from sandboxes import SandboxConfig, open_sandbox
from tasks.getters import GetterContext, SandboxSource, run_getter
from tasks.metrics.app_configs import A11Y_NS, check_accessibility_tree
from tests.conftest import OSWORLD_EXAMPLES, require_image
from tests.desktop_helpers import ENV
from tests.tasks.osworld.test_osworld_apps_live import TASK

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.desktop]
TASK_7B1E = OSWORLD_EXAMPLES / "thunderbird" / "7b1e1ff9-bb85-49be-b01d-d6424be18cd0.json"


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


# Presses an accessible's first action (a menu item's click, a link's jump) by role and name.
PRESS = r"""
import sys, gi
gi.require_version("Atspi", "2.0")
from gi.repository import Atspi
def find(node, depth=0):
    if node.get_role_name() == sys.argv[1] and node.get_name() == sys.argv[2]:
        return node
    for i in range(node.get_child_count() if depth < 60 else 0):
        child = node.get_child_at_index(i)
        found = child and find(child, depth + 1)
        if found:
            return found
node = find(Atspi.get_desktop(0))
sys.exit(0 if node and Atspi.Action.do_action(node.get_action_iface(), 0) else 1)
"""
NO_ACCOUNT_WIZARD = (
    'user_pref("mail.provider.suppress_dialog_on_startup", true);\n'
    'user_pref("mailnews.start_page.enabled", false);\n'
)


def test_the_about_profiles_task_rule_on_thunderbirds_own_tree(tmp_path):
    """7b1e1ff9's CSS rule scores 0 on Thunderbird's tab strip, 1 once About Profiles is a tab
    (opened as a user does: Help, Troubleshooting Information, its about:profiles link)."""
    if not TASK_7B1E.is_file():
        pytest.skip("the OSWorld task files are not here")
    require_image("desktop")
    rules = json.loads(TASK_7B1E.read_text())["evaluator"]["expected"]["rules"]
    with open_sandbox(SandboxConfig(image="desktop", memory_mb=4096)) as box:
        code, out = box.exec(["stateact-desktop", "start", "1280x720"], timeout=120)
        assert code == 0, out
        profile = "/home/user/tb-profile"
        box.exec(["mkdir", "-p", profile])
        box.exec(["bash", "-c", f"printf %s {shlex.quote(NO_ACCOUNT_WIZARD)} > {profile}/user.js"])
        box.exec(["bash", "-c", ENV + f"(thunderbird --profile {profile} >/dev/null 2>&1 &)"])
        ctx = GetterContext(TASK, SandboxSource(box), None, tmp_path / "work")
        strip = [{"selectors": ['page-tab-list[attr|id="tabmail-tabs"]>page-tab']}]
        deadline, tree = time.monotonic() + 120, ""
        while check_accessibility_tree(tree, strip) == 0.0:
            assert time.monotonic() < deadline, f"no tab strip in the tree: {tree[:500]}"
            time.sleep(3)
            tree = run_getter({"type": "accessibility_tree"}, ctx)
        assert check_accessibility_tree(tree, rules) == 0.0

        def press(role: str, name: str) -> None:
            command = f"python3 -c {shlex.quote(PRESS)} {shlex.quote(role)} {shlex.quote(name)}"
            for _ in range(20):
                if box.exec(["bash", "-c", ENV + command], timeout=60)[0] == 0:
                    return
                time.sleep(1)
            raise AssertionError(f"no {role} {name!r} to press")

        window = "xdotool search --onlyvisible --name Thunderbird | head -1"
        box.exec(["bash", "-c", ENV + f"xdotool windowactivate --sync $({window}) key alt+h"])
        press("menu item", "Troubleshooting Information")
        press("link", "about:profiles")
        deadline = time.monotonic() + 60
        while check_accessibility_tree(tree, rules) == 0.0:
            assert time.monotonic() < deadline, "About Profiles never showed as a tab"
            time.sleep(2)
            tree = run_getter({"type": "accessibility_tree"}, ctx)
