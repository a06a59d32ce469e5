"""`stateact code --apply` stays inside the repository, keeps links and modes, and is all or
nothing.

The unit half drives `apply_changes` on trees built by hand (including a failure half-way); the
command half runs a scripted agent on both backends that tries to write through a link it replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from harness.apps.coding import apply_changes, changed_files
from harness.kernel.core import StateActError
from tests.conftest import require_image, stateact


def snapshot(root: Path) -> str:
    """A hash of names, link targets, modes and contents of everything under `root`."""
    digest = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(dirs + names):
            path = Path(folder) / name
            info = path.lstat()
            digest.update(f"{path.relative_to(root)}:{info.st_mode:o}".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            elif path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


class Changes:
    def __init__(self, repo: Path, returned: Path):
        self.added, self.modified, self.deleted = changed_files(repo, returned)


@pytest.fixture
def trees(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("old\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho old\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "alias.py").symlink_to("calc.py")
    (repo / "out").symlink_to(outside)
    returned = tmp_path / "returned"
    returned.mkdir()
    (returned / "calc.py").write_text("new\n")
    (returned / "run.sh").write_text("#!/bin/sh\necho new\n")
    (returned / "run.sh").chmod(0o755)
    return repo, returned, outside


def test_links_are_neither_deleted_nor_followed_and_modes_stay(trees):
    repo, returned, outside = trees
    changes = Changes(repo, returned)
    assert changes.deleted == [] and sorted(changes.modified) == ["calc.py", "run.sh"]
    apply_changes(repo, returned, changes)
    assert (repo / "calc.py").read_text() == "new\n"
    assert os.readlink(repo / "alias.py") == "calc.py" and (repo / "out").is_symlink()
    assert (repo / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not [p for p in repo.iterdir() if ".stateact-" in p.name]


def test_a_change_through_a_link_is_refused_whole(trees):
    repo, returned, outside = trees
    (returned / "out").mkdir()
    (returned / "out" / "evil.txt").write_text("planted")
    before = snapshot(repo)
    changes = Changes(repo, returned)
    assert "out/evil.txt" in changes.added
    with pytest.raises(StateActError, match="symbolic link out"):
        apply_changes(repo, returned, changes)
    assert snapshot(repo) == before and list(outside.iterdir()) == []


def test_a_failure_half_way_leaves_the_repository_as_it_was(trees):
    repo, returned, outside = trees
    (repo / "x").mkdir()
    (repo / "x" / "inner.txt").write_text("inner")
    (returned / "a_new.txt").write_text("added")
    (returned / "x").write_text("a file where the repository has a folder")
    before = snapshot(repo)
    changes = Changes(repo, returned)
    assert changes.added == ["a_new.txt", "x"]  # a_new.txt lands first, then x fails
    with pytest.raises(StateActError, match="the repository is unchanged"):
        apply_changes(repo, returned, changes)
    assert snapshot(repo) == before


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/passwd", "a/../../b"])
def test_names_outside_the_repository_are_refused(trees, name):
    repo, returned, _ = trees

    class Odd:
        added, modified, deleted = [name], [], []

    with pytest.raises(StateActError, match="not inside the repository"):
        apply_changes(repo, returned, Odd())


def call(name: str, **params) -> dict:
    return {"tool_calls": [{"name": name, "input": params}]}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_code_apply_refuses_a_link_the_agent_replaced(tmp_path, backend):
    if backend == "docker":
        require_image("base")
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "tool.sh").write_text("#!/bin/sh\necho old\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "docs").symlink_to(outside)
    (repo / "alias.sh").symlink_to("tool.sh")
    before = snapshot(repo)
    hostile = (
        "cd /home/user/proj && sed -i s/old/new/ tool.sh && rm docs && mkdir docs && "
        "echo planted > docs/evil.txt"
    )
    agent = [
        call("bash", command=hostile),
        call("bash", command="ls -la /home/user/proj"),
        call("bash", command="cat /home/user/proj/tool.sh"),
        call("finish", summary="done"),
    ]
    gate = [call("verdict", passed=True, gaps=[])]
    (tmp_path / "agent.json").write_text(json.dumps(agent))
    (tmp_path / "gate.json").write_text(json.dumps(gate))
    common = ["--sandbox", backend, "--model", f"script/{tmp_path / 'agent.json'}"]
    common += ["--gate-model", f"script/{tmp_path / 'gate.json'}", "--apply", "--json"]
    done = stateact("code", "--repo", str(repo), "Say new.", *common, "--out", str(tmp_path / "r"))
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert summary["gate_passed"] is True and summary["applied"] is False
    assert "symbolic link docs" in summary["error"] and "Traceback" not in done.stderr
    assert "alias.sh" not in summary["deleted"]
    assert snapshot(repo) == before and list(outside.iterdir()) == []
    assert Path(summary["patch"]).is_file()  # the change is not lost

    # Without the hostile part, the change applies, keeping the link and the executable bit.
    agent[0] = call("bash", command="cd /home/user/proj && sed -i s/old/new/ tool.sh")
    (tmp_path / "agent.json").write_text(json.dumps(agent))
    done = stateact("code", "--repo", str(repo), "Say new.", *common, "--out", str(tmp_path / "s"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["applied"] is True
    assert (repo / "tool.sh").read_text() == "#!/bin/sh\necho new\n"
    assert (repo / "tool.sh").stat().st_mode & 0o777 == 0o755
    assert os.readlink(repo / "alias.sh") == "tool.sh" and (repo / "docs").is_symlink()
