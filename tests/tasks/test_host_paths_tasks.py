"""A task's file references, ids and suite code never reach host files the user did not hand over.

Unit checks of every place a task field becomes a host path, then the commands end to end: a run
on both backends that refuses `../secret` (and copies it with --allow-host-paths), suite ids that
try to climb out of their run folder, and a dry run that leaves a foreign build script alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.kernel.core import StateActError
from harness.kernel.records import safe_run_name
from tasks.cache import cache_name, resolve_source
from tasks.getters import GetterContext, RootDirSource, run_getter
from tasks.schema import task_from_dict
from tasks.support import source_reason
from tests.conftest import require_image, stateact

SECRET = "host secret 7f3a"


@pytest.fixture
def layout(tmp_path):
    """A task folder with one input file, a secret beside it, and a cache folder."""
    task_dir = tmp_path / "suite" / "task"
    task_dir.mkdir(parents=True)
    (task_dir / "input.txt").write_text("input")
    (task_dir / "sub").mkdir()
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "suite" / "secret.txt").write_text(SECRET)
    cache = tmp_path / "cache"
    cache.mkdir()
    return tmp_path, task_dir, cache


def make_task(task_dir: Path, task_id: str = "t1", **extra):
    data = {"id": task_id, "instruction": "x", **extra}
    return task_from_dict(data, task_dir / "task.json")


ESCAPES = [
    "../secret.txt",
    "../../secret.txt",
    "sub/../../secret.txt",
    "file:///{root}/secret.txt",
    "file://{root}/..%2Fsecret.txt",
    "{root}/secret.txt",
]


@pytest.mark.parametrize("reference", ESCAPES)
def test_references_that_leave_the_task_folder_are_refused(layout, reference):
    root, task_dir, cache = layout
    reference = reference.format(root=root)
    task = make_task(task_dir)
    with pytest.raises(StateActError, match="outside the task's folder") as caught:
        resolve_source(reference, task, cache)
    assert "--allow-host-paths" in str(caught.value) and "\n" not in str(caught.value)
    assert source_reason(reference, task, cache).startswith("file outside the task folder")
    task.allow_host_paths = True
    if "%2F" not in reference:  # a plain path with a literal %2F is just a missing file
        assert resolve_source(reference, task, cache).read_text() == SECRET


def test_references_inside_the_task_folder_and_cache_work(layout):
    root, task_dir, cache = layout
    task = make_task(task_dir)
    assert resolve_source("input.txt", task, cache).read_text() == "input"
    assert resolve_source(str(task_dir / "input.txt"), task, cache).read_text() == "input"
    url = "https://example.org/files/data.txt"
    (cache / cache_name(url)).write_text("cached")
    assert resolve_source(url, task, cache).read_text() == "cached"


def test_a_suite_task_may_use_its_suites_folders_and_no_further(tmp_path):
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "fixtures").mkdir()
    (suite / "fixtures" / "in.txt").write_text("fixture")
    (tmp_path / "secret.txt").write_text(SECRET)
    task = make_task(suite / "tasks")
    with pytest.raises(StateActError, match="outside the task's folder"):
        resolve_source("../fixtures/in.txt", task, None)  # no build.py or solutions/: not a suite
    (suite / "build.py").write_text("")
    assert resolve_source("../fixtures/in.txt", task, None).read_text() == "fixture"
    with pytest.raises(StateActError, match="outside the task's folder"):
        resolve_source("../../secret.txt", task, None)


def test_a_link_in_the_task_folder_that_points_out_is_refused(layout):
    root, task_dir, cache = layout
    (task_dir / "link.txt").symlink_to(root / "secret.txt")
    with pytest.raises(StateActError, match="outside the task's folder"):
        resolve_source("link.txt", make_task(task_dir), cache)


@pytest.mark.parametrize(
    "url,task_id",
    [
        ("https://example.org/..%2F..%2Fsecret.txt", "t1"),
        ("https://example.org/%2E%2E%2Fsecret.txt", "t1"),
        ("https://example.org/secret.txt", "../.."),
        ("https://example.org/secret.txt", ".."),
        ("https://example.org/secret.txt", "x" * 5000),
        ("https://example.org/" + "y" * 5000, "t1"),
    ],
)
def test_urls_and_task_ids_never_leave_the_cache(layout, url, task_id):
    root, task_dir, cache = layout
    (cache / "t1").mkdir()
    task = make_task(task_dir, task_id=task_id)
    with pytest.raises(StateActError, match="is not in the cache dir"):
        resolve_source(url, task, cache / "t1" if task_id == "t1" else cache)


def test_getters_stay_in_their_folders(layout, tmp_path):
    root, task_dir, cache = layout
    task = make_task(task_dir)
    work = tmp_path / "work"
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    state = tmp_path / "state"
    (state / "home" / "user").mkdir(parents=True)
    (state / "home" / "user" / "link.txt").symlink_to(root / "secret.txt")
    ctx = GetterContext(task, RootDirSource(state), cache, work, outputs_dir=outputs)
    local = {"type": "local_file", "path": "../secret.txt"}
    with pytest.raises(StateActError, match="outside the task's folder"):
        run_getter(local, ctx)
    cloud = {"type": "cloud_file", "path": str(root / "secret.txt")}
    with pytest.raises(StateActError, match="outside the task's folder"):
        run_getter(cloud, ctx)
    assert run_getter({"type": "cache_file", "path": "../secret.txt"}, ctx) is None
    climbing = {"type": "vm_file", "path": "/home/user/../../../secret.txt", "dest": "a"}
    assert run_getter(climbing, ctx) is None  # /secret.txt under the state folder: absent
    with pytest.raises(StateActError, match="leads out of the --root folder"):
        run_getter({"type": "vm_file", "path": "/home/user/link.txt", "dest": "b"}, ctx)


def test_an_execute_step_cannot_write_its_output_outside(layout, tmp_path):
    from tasks.schema import SetupStep
    from tasks.setup import SetupRunner

    root, task_dir, cache = layout

    class EchoSandbox:
        def exec(self, argv, timeout=120.0, user="user"):
            return 0, "sandbox-written"

    outputs = tmp_path / "outputs"
    runner = SetupRunner(EchoSandbox(), make_task(task_dir), cache, {}, outputs_dir=outputs)
    step = SetupStep(type="execute", parameters={"command": "true", "stdout": "../planted.txt"})
    with pytest.raises(StateActError, match="leaves the outputs folder"):
        runner.run(0, step)
    assert not (tmp_path / "planted.txt").exists()


@pytest.mark.parametrize(
    "task_id",
    ["..", ".", "/", "a/../../b", "../../../../tmp/x", "a\x00b", "x" * 5000, "-rf", ""],
)
def test_run_names_are_one_safe_component(task_id):
    from harness.apps.oracle import solution_path

    suite = Path("/nonexistent-suite")
    assert solution_path(make_task(suite / "tasks", task_id=task_id or "x")) is None
    name = safe_run_name(task_id)
    assert name not in ("", ".", "..") and "/" not in name and "\x00" not in name
    assert len(name) <= 100 and not name.startswith(("-", "."))


def script(folder: Path, turns: list) -> str:
    path = folder / "script.json"
    path.write_text(json.dumps(turns))
    return f"script/{path}"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_run_refuses_a_download_from_outside_unless_allowed(layout, backend):
    root, task_dir, cache = layout
    if backend == "docker":
        require_image("base")
    task = {
        "id": "climb",
        "instruction": "Read the file.",
        "config": [
            {
                "type": "download",
                "parameters": {"files": [{"url": "../secret.txt", "path": "/home/user/s.txt"}]},
            }
        ],
    }
    (task_dir / "task.json").write_text(json.dumps(task))
    cat = {"tool_calls": [{"name": "bash", "input": {"command": "cat /home/user/s.txt"}}]}
    common = ["--sandbox", backend, "--image", "base", "--max-turns", "1"]
    refused = stateact(
        "run",
        str(task_dir / "task.json"),
        "--model",
        script(root, [cat]),
        *common,
        "--out",
        str(root / "refused"),
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "outside the task's folder" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not (root / "refused").exists()  # refused before any sandbox or run folder

    allowed = stateact(
        "run",
        str(task_dir / "task.json"),
        "--model",
        script(root, [cat]),
        *common,
        "--allow-host-paths",
        "--out",
        str(root / "allowed"),
    )
    assert "Traceback" not in allowed.stderr
    assert SECRET in (root / "allowed" / "trajectory.jsonl").read_text()


def test_check_refuses_a_gold_file_from_outside(layout):
    root, task_dir, cache = layout
    state = root / "state"
    (state / "home" / "user").mkdir(parents=True)
    (state / "home" / "user" / "out.txt").write_text(SECRET)
    task = {
        "id": "gold",
        "instruction": "x",
        "evaluator": {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/home/user/out.txt", "dest": "out.txt"},
            "expected": {"type": "cloud_file", "path": "../../secret.txt", "dest": "gold.txt"},
        },
    }
    (task_dir / "task.json").write_text(json.dumps(task))
    args = ["check", str(task_dir / "task.json"), "--root", str(state)]
    refused = stateact(*args)
    assert refused.returncode == 2 and "outside the task's folder" in refused.stderr
    assert "Traceback" not in refused.stderr and refused.stdout == ""
    allowed = stateact(*args, "--allow-host-paths")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["score"] == 1.0


@pytest.mark.slow
def test_suite_run_folders_never_leave_the_suite(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("kept")
    (tmp_path / "outside.txt").write_text("outside")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    ids = ["..", ".", "a/../../b", "../../outside.txt", "x" * 3000, "nul\x00id"]
    for number, task_id in enumerate(ids):
        task = {
            "id": task_id,
            "instruction": "x",
            "config": [{"type": "googledrive", "parameters": {}}],  # unsupported: no sandbox
        }
        (tasks / f"task{number}.json").write_text(json.dumps(task))
    model = script(tmp_path, [{"text": "nothing"}])
    # A first pass, then --resume over partial folders, which the rerun clean-up removes.
    first = stateact("suite", str(tasks), "--model", model, "--out", str(out))
    assert first.returncode == 0, first.stderr
    for run in (out / "runs").iterdir():
        (run / "result.json").unlink()
    again = stateact("suite", str(tasks), "--model", model, "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr
    assert (out / "keep.txt").read_text() == "kept"
    assert (tmp_path / "outside.txt").read_text() == "outside"
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == len(ids) and all(run.parent == out / "runs" for run in runs)
    assert all((run / "result.json").is_file() for run in runs)


@pytest.mark.slow
def test_run_with_a_climbing_id_stays_under_runs(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "../../escaped", "instruction": "x"}))
    model = script(tmp_path, [{"text": "nothing"}])
    done = stateact("run", str(task), "--model", model, "--sandbox", "local", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert not (tmp_path.parent / "escaped").exists()
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["_.._escaped"]


def test_dry_run_leaves_a_foreign_build_script_alone(tmp_path):
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    marker = tmp_path / "build-ran"
    (suite / "build.py").write_text(
        "from pathlib import Path\n\ndef ensure_fixtures(root):\n    "
        f"Path({str(marker)!r}).touch()\n"
    )
    (suite / "tasks" / "a.json").write_text(json.dumps({"id": "a", "instruction": "x"}))
    done = stateact("suite", str(suite), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "--build-fixtures" in done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == "a"
    done = stateact("suite", str(suite), "--dry-run", "--build-fixtures")
    assert done.returncode == 0 and marker.exists()
