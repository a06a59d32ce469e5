"""`batch --ray`: three workbooks on a loopback Ray test cluster; outputs, run folders and
summary.csv land in OUT as with the local batch, each row names its node, and no sandbox is
left."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import REPO, require_image
from tests.harness.apps.test_batch import (
    batch_argv,
    formula,
    make_books,
    make_check,
    read_summary,
    scripts,
)
from tests.ray_helpers import LOOPBACK_ENV, loopback_cluster, require_ray

require_ray()


@pytest.mark.docker
@pytest.mark.slow
def test_batch_on_a_ray_cluster(tmp_path):
    require_image("base")
    make_books(tmp_path / "books", count=3)
    agent, gate = scripts(tmp_path)
    out = tmp_path / "out"
    check = str(make_check(tmp_path))
    env = {**os.environ, **LOOPBACK_ENV}
    with loopback_cluster(slots_per_node=(2,)) as (cluster, nodes):
        argv = batch_argv(tmp_path / "books", out, agent, gate, "--check", check)
        argv += ["--ray", cluster.address]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert "3/3 files passed the gate" in done.stdout
    rows = read_summary(out)
    assert sorted(rows) == ["book1.xlsx", "book2.xlsx", "book3.xlsx"]
    for name, row in rows.items():
        assert row["status"] == "completed" and row["gate_passed"] == "passed"
        assert row["output"] == str(out / name)
        assert row["score"] == ("0.0" if name == "book3.xlsx" else "1.0")
        assert formula(out / name) == ("=SUM(A1:A2)" if name == "book3.xlsx" else "=SUM(A1:A3)")
        item = json.loads((out / "runs" / name / "batch_item.json").read_text())
        assert item["node"] == nodes[0].node_id and item["node_ip"] == "127.0.0.1"
        assert (out / "runs" / name / "gate" / "round-1.json").exists()
