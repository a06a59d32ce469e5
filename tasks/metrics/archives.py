"""Archive metrics as OSWorld computes them: compare_archive (chrome.py) and compare_zip_files
(vscode.py). Oddities kept for comparable scores are listed in docs/osworld-fidelity.md.
"""

from __future__ import annotations

import difflib
import io
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pypdf import PdfReader

from harness.kernel.core import StateActError
from tasks.metrics.app_configs import archive_members
from tasks.metrics.documents import UnreadableFile, logger
from tasks.metrics.registry import METRICS, metric

# compare_archive's file_type: the metric OSWorld runs on each pair of members.
MEMBER_METRICS = {
    "text": "compare_text_file",
    "pdf": "compare_pdfs",
    "docx": "compare_docx_files",
    "ppt": "compare_pptx_files",
    "image": "compare_images",
    "csv": "compare_csv",
    "table": "compare_table",
    "audio": "compare_audios",
    "video": "compare_videos",
}


@metric("compare_archive")
def compare_archive(
    result: str | None, expected: str, file_path: str = "", file_type: str = "text", **options: Any
) -> float:
    """The entries directly in `file_path` of both unpacked archives have the same names; the score
    is the mean of the `file_type` metric over the pairs (other options go to that metric)."""
    if not result:
        return 0.0
    if file_type not in MEMBER_METRICS:
        raise StateActError(
            f"compare_archive has no file_type {file_type!r}; choose one of "
            f"{sorted(MEMBER_METRICS)}"
        )
    compare = METRICS[MEMBER_METRICS[file_type]]
    with tempfile.TemporaryDirectory(prefix="stateact-archive-") as scratch:
        folders = []
        for path, side in ((result, "pred"), (expected, "gold")):
            into = Path(scratch, side)
            into.mkdir()
            try:
                archive_members(path, into)
            except (UnreadableFile, OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
                logger.info("compare_archive scores 0: %s", exc)  # OSWorld's unpacking fails too
                return 0.0
            folders.append(into / file_path)
        names = [sorted(os.listdir(folder)) for folder in folders]
        if names[0] != names[1]:
            return 0.0
        scores = [
            compare(str(folders[0] / a), str(folders[1] / b), **options)
            for a, b in zip(names[0], names[1], strict=True)
        ]
    return sum(scores) / len(names[0])


def pdf_text(content: bytes) -> str:
    return "".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


@metric("compare_zip_files")
def compare_zip_files(result: str | None, expected: str, **_: Any) -> float:
    """The same member names (directories included) with identical bytes; PDF members need 95% text
    similarity instead."""
    if not result:
        return 0.0
    with zipfile.ZipFile(result) as mine, zipfile.ZipFile(expected) as gold:
        names = set(mine.namelist())
        if names != set(gold.namelist()):
            return 0.0
        for name in names:
            content1, content2 = mine.read(name), gold.read(name)
            if name.lower().endswith(".pdf"):
                matcher = difflib.SequenceMatcher(None, pdf_text(content1), pdf_text(content2))
                if matcher.ratio() < 0.95:
                    return 0.0
            elif content1 != content2:
                return 0.0
    return 1.0
