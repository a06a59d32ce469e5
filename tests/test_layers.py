"""The layering is enforced: `make lint`'s import contracts and function-import check pass on the
project and catch an import that points up a layer, planted in a copy of the source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = ("harness", "gates", "subagents", "sandboxes", "tasks")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def copy_source(target: Path) -> Path:
    """The project's Python source and pyproject.toml (the contracts), nothing else."""
    for package in PACKAGES:
        shutil.copytree(
            REPO / package,
            target / package,
            ignore=lambda folder, names: [
                n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir()
            ],
        )
    shutil.copy(REPO / "pyproject.toml", target / "pyproject.toml")
    shutil.copytree(REPO / ".ci", target / ".ci")
    return target


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )


def function_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / ".ci" / "function_imports.py"), str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    if not LINT_IMPORTS.exists():
        pytest.fail("import-linter is missing: `make install` installs the dev extra")
    return copy_source(tmp_path_factory.mktemp("layers"))


def test_the_project_keeps_its_layers(source):
    done = lint_imports(source)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in done.stdout
    done = function_imports(source)
    assert done.returncode == 0 and done.stdout == "", done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "message"),
    [
        ("harness/kernel/loop.py", "from harness.tools import BashTool", "harness.kernel.loop"),
        ("sandboxes/base.py", "import gates", "sandboxes.base"),
        ("gates/gate.py", "from subagents import ReportTool", "gates.gate"),
        ("harness/run/context.py", "from harness.runner import run_task", "harness.run.context"),
    ],
)
def test_an_import_pointing_up_breaks_the_contract(source, tmp_path, module, planted, message):
    root = copy_source(tmp_path / "copy")
    path = root / module
    path.write_text(f"{path.read_text()}\n{planted}  # noqa\n")
    done = lint_imports(root)
    assert done.returncode == 1
    assert "Layers only point down BROKEN" in done.stdout
    assert f"- {message} -> " in done.stdout, done.stdout[-2000:]


def test_the_toolbox_may_not_import_the_harness(source, tmp_path):
    root = copy_source(tmp_path / "copy")
    path = root / "sandboxes/toolbox/files.py"
    path.write_text(f"{path.read_text()}\nfrom harness.kernel.core import ToolError  # noqa\n")
    done = lint_imports(root)
    assert done.returncode == 1
    assert "sandbox on the standard library alone BROKEN" in done.stdout


def test_a_function_level_import_across_layers_is_caught(source, tmp_path):
    root = copy_source(tmp_path / "copy")
    path = root / "harness/tools/bash.py"
    path.write_text(
        f"{path.read_text()}\n\ndef lazy():\n    from gates import FinishGate\n\n    "
        "return FinishGate\n"
    )
    done = function_imports(root)
    assert done.returncode == 1
    assert "harness/tools/bash.py:" in done.stdout
    assert "harness.tools.bash imports gates inside a function" in done.stdout
    # within one unit a lazy import stays allowed
    path.write_text(f"{path.read_text()}\n\ndef own():\n    from harness.tools import plan\n")
    assert function_imports(root).stdout.count("inside a function") == 1
