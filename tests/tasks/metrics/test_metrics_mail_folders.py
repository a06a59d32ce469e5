"""check_thunderbird_folder on mbox files written by Python's mailbox module (the differential
cases in tests/osworld_cases/general/tbf-* hold Thunderbird-shaped files and OSWorld's verdicts)."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from tasks.metrics.mail_folders import check_thunderbird_folder, folder_signature


def write_folder(path: Path, subjects: list[str]) -> Path:
    box = mailbox.mbox(path)
    for subject in subjects:
        message = EmailMessage()
        message["From"], message["Subject"] = "billing@example.com", subject
        message.set_content(f"About {subject}.")
        box.add(message)
    box.flush()
    box.close()
    return path


def test_two_written_folders_agree_whatever_their_messages_as_in_osworld(tmp_path):
    bills = write_folder(tmp_path / "Bills", ["Invoice 1", "Invoice 2"])
    other = write_folder(tmp_path / "Other", ["Receipt"])
    assert check_thunderbird_folder(str(bills), str(bills)) == 1.0
    assert check_thunderbird_folder(str(other), str(bills)) == 1.0  # OSWorld's quirk, kept
    empty = tmp_path / "have_seen"
    empty.write_text("")
    assert folder_signature(empty, remove_duplicate=True) == "FROM - "
    assert check_thunderbird_folder(str(empty), str(bills)) == 0.0
    pair = [str(empty), str(bills)]
    assert check_thunderbird_folder(pair, [str(bills), str(bills)]) == 0.0
    assert check_thunderbird_folder([str(bills), str(other)], [str(other), str(bills)]) == 1.0


def test_absent_and_bad_folders(tmp_path):
    bills = write_folder(tmp_path / "Bills", ["Invoice"])
    assert check_thunderbird_folder(None, str(bills)) == 0.0
    assert check_thunderbird_folder([None, str(bills)], [str(bills), str(bills)]) == 0.0
    with pytest.raises(StateActError, match="cannot read the mail folder Gone"):
        check_thunderbird_folder(str(tmp_path / "Gone"), str(bills))
    with pytest.raises(StateActError, match="one result file for a list"):
        check_thunderbird_folder(str(bills), [str(bills)])
    latin = tmp_path / "Latin"
    latin.write_bytes(bills.read_bytes() + "Grüße".encode("latin-1"))
    with pytest.raises(StateActError, match="cannot read the mail folder Latin"):
        check_thunderbird_folder(str(latin), str(bills))
