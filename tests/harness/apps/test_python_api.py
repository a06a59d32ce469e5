"""The Python API: config overrides, bad input, and the runnable example in docs/python-api.md
(executed)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from harness.api import make_config, run_code
from harness.kernel.core import StateActError
from harness.run.config import RunConfig
from tests.conftest import REPO, require_image

DOC = REPO / "docs" / "python-api.md"


def test_make_config_applies_overrides_to_a_copy():
    base = RunConfig(model="script/a.json")
    config = make_config(
        config=base, image="base", gate_model="script/g.json", max_turns=7, max_cost=1.5
    )
    assert (config.model, config.sandbox.image, config.gate.model) == (
        "script/a.json",
        "base",
        "script/g.json",
    )
    assert (config.loop.max_turns, config.loop.max_cost_usd) == (7, 1.5)
    assert base.sandbox.image != "base" and base.loop.max_turns != 7
    with pytest.raises(StateActError, match="give a model spec"):
        make_config()


def test_run_code_on_a_missing_repository_raises_one_sentence(tmp_path):
    with pytest.raises(
        StateActError, match=r"the repository path .*nope does not exist or is not a folder\."
    ):
        run_code(tmp_path / "nope", "fix it", "script/x.json", out_dir=tmp_path / "out")


@pytest.mark.docker
@pytest.mark.slow
def test_the_documented_example_runs():
    require_image("base")
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(".xlsx") and " completed True " in lines[0]
    assert " completed True " in lines[1]
    assert lines[2].startswith("True ['greet.py'] ") and lines[2].endswith("changes.patch")
    assert "+    return 'Hello ' + name" in done.stdout
