"""App-config metrics on generated prefs.js, msgFilterRules.dat, settings and archives."""

from __future__ import annotations

import io
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.metrics import METRICS
from tasks.metrics.app_configs import (
    check_accessibility_tree,
    check_thunderbird_filter,
    check_thunderbird_prefs,
    compare_config,
    is_expected_installed_extensions,
    is_extension_installed,
    parse_prefs,
)
from tasks.metrics.archives import compare_archive, compare_zip_files
from tests.tasks.metrics.test_metrics_pdfs import write_pdf

PREFS = r"""// Mozilla User Preferences
user_pref("mail.server.default.applyIncomingFilters", true);
user_pref("mail.imap.use_status_for_biff", false);
user_pref("extensions.activeThemeID", "thunderbird-compact-dark@mozilla.org");
user_pref("mail.identity.id1.htmlSigText", "Anonym\nXYZ Lab");
user_pref("mail.identity.id1.auto_quote", false);
user_pref("browser.cache.disk.capacity", 1048576);
"""

FILTERS = """version="9"
logging="no"
name="discount"
enabled="yes"
type="17"
action="Move to folder"
actionValue="mailbox://nobody@Local%20Folders/Promotions"
condition="AND (subject,contains,discount)"
name="forward all"
enabled="no"
type="17"
action="Forward"
actionValue="anonym-x2024@gmail.com"
condition="ALL"
"""


def write(tmp_path, name, text) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_metrics_are_registered():
    for name in ("check_thunderbird_prefs", "check_thunderbird_filter", "compare_config"):
        assert name in METRICS
    for name in ("is_extension_installed", "compare_archive", "compare_zip_files"):
        assert name in METRICS


def test_prefs_parse_json_values():
    prefs = parse_prefs(PREFS)
    assert prefs["mail.imap.use_status_for_biff"] is False
    assert prefs["browser.cache.disk.capacity"] == 1048576
    assert prefs["mail.identity.id1.htmlSigText"] == "Anonym\nXYZ Lab"


def test_thunderbird_prefs_expect_and_unexpect(tmp_path):
    prefs = write(tmp_path, "prefs.js", PREFS)
    rules = {
        "expect": {
            "mail.server.default.applyIncomingFilters": {"method": "eq", "ref": True},
            "mail.imap.use_status_for_biff": {"method": "eq", "ref": False},
        },
        "unexpect": {"mail.server.default.autosync_offline_stores": {"method": "eq", "ref": False}},
    }
    assert check_thunderbird_prefs(prefs, rules) == 1.0
    signature = {
        "expect": {"mail.identity.id1.htmlSigText": {"method": "re.S", "ref": "Anonym\nXYZ Lab"}}
    }
    assert check_thunderbird_prefs(prefs, signature) == 1.0
    theme = {"expect": {"extensions.activeThemeID": {"method": "re", "ref": "dark"}}}
    assert check_thunderbird_prefs(prefs, theme) == 1.0
    turned_off = PREFS + 'user_pref("mail.server.default.autosync_offline_stores", false);\n'
    assert check_thunderbird_prefs(write(tmp_path, "p2.js", turned_off), rules) == 0.0
    quote = {"expect": {"mail.identity.id1.auto_quote": {"method": "eq", "ref": True}}}
    assert check_thunderbird_prefs(prefs, quote) == 0.0
    absent = {"expect": {"mail.not.there": {"method": "eq", "ref": True}}}
    assert check_thunderbird_prefs(prefs, absent) == 0.0
    assert check_thunderbird_prefs(None, rules) == 0.0
    with pytest.raises(StateActError, match="expect"):
        check_thunderbird_prefs(prefs, {"expect": ["x"]})


def test_thunderbird_filter(tmp_path):
    rules_file = write(tmp_path, "msgFilterRules.dat", FILTERS)
    move = {
        "enabled": "yes",
        "action": "Move to folder",
        "actionValue": "mailbox://nobody@Local%20Folders/Promotions",
        "condition": ["AND (subject,contains,discount)"],
    }
    assert check_thunderbird_filter(rules_file, {"expect": [move]}) == 1.0
    forward = {
        "enabled": "yes",
        "action": "Forward",
        "actionValue": "anonym-x2024@gmail.com",
        "condition": ["ALL"],
    }
    assert check_thunderbird_filter(rules_file, {"expect": [forward]}) == 0.0  # it is disabled
    other_folder = {**move, "actionValue": "mailbox://nobody@Local%20Folders/Trash"}
    assert check_thunderbird_filter(rules_file, {"expect": [other_folder]}) == 0.0
    assert check_thunderbird_filter(rules_file, {"expect": [move], "unexpect": [move]}) == 0.0
    assert check_thunderbird_filter(str(tmp_path / "none.dat"), {"expect": [move]}) == 0.0


def test_compare_config(tmp_path):
    settings = write(
        tmp_path, "settings.json", '{\n  "workbench.colorTheme": "Visual Studio Dark",\n  "a": 1\n}'
    )
    expected = {"expected": '{"workbench.colorTheme": "Visual Studio Dark"}\n'}
    assert compare_config(settings, expected, containment_ok=True) == 1.0
    assert compare_config(settings, expected) == 0.0  # the file has more than the expected settings
    light = write(tmp_path, "light.json", '{"workbench.colorTheme": "Default Light+"}')
    assert compare_config(light, expected, containment_ok=True) == 0.0
    project = write(tmp_path, "OpenProject.txt", "project\n")
    assert compare_config(project, {"expected": "project"}) == 1.0
    assert compare_config(project, {"expected": "other"}) == 0.0


def test_is_extension_installed():
    listing = "ms-python.python\nmattn.lisp\n"
    assert is_extension_installed(listing, {"type": "contain", "expected": "mattn.lisp"}) == 1.0
    assert (
        is_extension_installed(listing, {"type": "contain", "expected": "njpwerner.autodocstring"})
        == 0.0
    )
    assert is_extension_installed(listing, {"type": "not_contain", "expected": "x.y"}) == 1.0
    with pytest.raises(StateActError, match="not 'contain'"):
        is_extension_installed(listing, {"type": "regex", "expected": "x"})


def pdf_bytes(text: str) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch, "page.pdf")
        write_pdf(path, [text])
        return path.read_bytes()


def make_zip(tmp_path, name, members: dict[str, bytes]) -> str:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return str(path)


def make_tar(tmp_path, name, members: dict[str, bytes]) -> str:
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return str(path)


def test_compare_archive_with_pdfs(tmp_path):
    members = {
        "lecture_slides/week0.pdf": pdf_bytes("Week zero"),
        "lecture_slides/week1.pdf": pdf_bytes("Week one"),
    }
    gold = make_zip(tmp_path, "gold.zip", members)
    assert (
        compare_archive(
            make_zip(tmp_path, "same.zip", members),
            gold,
            file_type="pdf",
            file_path="lecture_slides",
        )
        == 1.0
    )
    missing = make_zip(
        tmp_path, "missing.zip", {"lecture_slides/week0.pdf": members["lecture_slides/week0.pdf"]}
    )
    folder = {"file_type": "pdf", "file_path": "lecture_slides"}
    assert compare_archive(missing, gold, **folder) == 0.0
    changed = {**members, "lecture_slides/week1.pdf": pdf_bytes("Something else entirely")}
    partial = compare_archive(make_zip(tmp_path, "changed.zip", changed), gold, **folder)
    assert 0.5 <= partial < 1.0
    tar_gold = make_tar(tmp_path, "gold.tar.gz", {"a.pdf": pdf_bytes("A")})
    assert (
        compare_archive(
            make_tar(tmp_path, "pdf.tar.gz", {"a.pdf": pdf_bytes("A")}), tar_gold, file_type="pdf"
        )
        == 1.0
    )
    assert compare_archive(write(tmp_path, "not.zip", "plain text"), gold) == 0.0
    assert compare_archive(None, gold) == 0.0


def test_compare_zip_files(tmp_path):
    gold = make_zip(tmp_path, "gold.zip", {"essay.docx": b"abc", "reminder.txt": b"x"})
    assert (
        compare_zip_files(
            make_zip(tmp_path, "same.zip", {"reminder.txt": b"x", "essay.docx": b"abc"}), gold
        )
        == 1.0
    )
    assert (
        compare_zip_files(
            make_zip(tmp_path, "diff.zip", {"essay.docx": b"abd", "reminder.txt": b"x"}), gold
        )
        == 0.0
    )


def test_is_expected_installed_extensions():
    rules = {"expected": ["Momentum", "Google Translate"]}
    assert is_expected_installed_extensions(["Google Translate", "Momentum", "Other"], rules) == 1.0
    assert is_expected_installed_extensions(["Momentum"], rules) == 0.0


TREE = (
    '<desktop-frame name="main"><application name="Thunderbird"><frame name="Account Setup">'
    '<entry name="Email address">anonym-x2024@outlook.com</entry><password-text name="Password"/>'
    "</frame></application></desktop-frame>"
)


def test_check_accessibility_tree_xpath():
    rules = [
        {
            "xpath": "//application[@name='Thunderbird']//*[contains(text(), "
            "'anonym-x2024@outlook.com') or contains(@name, 'anonym-x2024@outlook.com')]"
        },
        {
            "xpath": "//application[@name='Thunderbird']//*[contains(@name, 'password') or "
            "contains(@name, 'Password')]"
        },
    ]
    assert check_accessibility_tree(TREE, rules) == 1.0
    assert check_accessibility_tree(TREE.replace("anonym-x2024", "someone"), rules) == 0.0
    assert check_accessibility_tree("", rules) == 0.0
    # CSS selectors work as in OSWorld (lxml's cssselect).
    assert check_accessibility_tree(TREE, [{"selectors": ["application[name=Thunderbird]"]}]) == 1.0
    assert check_accessibility_tree(TREE, [{"selectors": ["application[name=Firefox]"]}]) == 0.0
    with pytest.raises(StateActError, match="needs an 'xpath' or 'selectors'"):
        check_accessibility_tree(TREE, [{"text": "x"}])
