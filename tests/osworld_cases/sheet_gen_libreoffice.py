"""The `table-libreoffice` cases: `table` cases whose workbooks went through a LibreOffice save.

LibreOffice writes workbooks the way the tasks' real results look (shared strings, two-cell chart
anchors, explicit row attributes, its own style and validation records), so these cases check the
metrics on that shape too. Run `python -m tests.osworld_cases.sheet_gen_libreoffice [IMAGE]` with
Docker and the desktop image (default `stateact-desktop`); verdicts again come from OSWorld's run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.osworld_cases.sheet_gen_common import HERE, CaseSet

SKIP_PREFIXES = ("print-", "data-result-missing", "data-result-garbage", "data-result-is", "sst-")
"""Cases that need CSV exports, broken files, or are already in LibreOffice's string layout."""
CONVERT = (
    'cd /w && HOME=/tmp soffice --headless --convert-to xlsx:"Calc MS Excel 2007 XML" '
    "--outdir /w/out /w/in/*.xlsx"
)


def workbook_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".xlsx")


def convert(work: Path, image: str) -> None:
    subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "-v",
            f"{work}:/w",
            image,
            "bash",
            "-c",
            CONVERT,
        ],
        capture_output=True,
        timeout=1800,
    )


def round_trip(files: dict[str, Path], image: str) -> dict[str, Path]:
    """Save each workbook through LibreOffice; {key: converted file}.

    One soffice run sometimes stops part way through a batch; the rest is converted in further
    runs, and a file that makes no progress is left out.
    """
    work = Path(tempfile.mkdtemp(prefix="lo-cases-"))
    os.chmod(work, 0o755)  # the container runs as another user
    (work / "in").mkdir()
    (work / "out").mkdir()
    os.chmod(work / "out", 0o777)
    pending = dict(sorted(files.items()))
    while pending:
        for child in (work / "in").iterdir():
            child.unlink()
        for key, path in pending.items():
            shutil.copy(path, work / "in" / f"{key}.xlsx")
        convert(work, image)
        done = [k for k in pending if (work / "out" / f"{k}.xlsx").is_file()]
        if not done:
            pending.pop(next(iter(pending)))
        for key in done:
            pending.pop(key)
    return {key: work / "out" / f"{key}.xlsx" for key in files}


def main(image: str = "stateact-desktop") -> None:
    source = json.loads((HERE / "table" / "cases.json").read_text())
    chosen = [c for c in source if not c["id"].startswith(SKIP_PREFIXES)]
    files = {}
    for case in chosen:
        folder = HERE / "table" / case["id"]
        for name in workbook_names(folder):
            files[f"{case['id']}__{name[:-5]}"] = folder / name
    converted = round_trip(files, image)
    cases = CaseSet("table-libreoffice")
    cases.reset()
    for case in chosen:
        folder = HERE / "table" / case["id"]
        outputs = {name: converted[f"{case['id']}__{name[:-5]}"] for name in workbook_names(folder)}
        if not all(p.is_file() for p in outputs.values()):
            continue  # a file LibreOffice could not open
        target = cases.folder(case["id"])
        for name, path in outputs.items():
            shutil.copy(path, target / name)
        cases.add(case["id"], case["metric"], case["result"], case["expected"], case["options"])
    cases.write()
    print(f"{len(cases.cases)} table-libreoffice cases")


if __name__ == "__main__":
    main(*sys.argv[1:])
