"""evaluate(): OSWorld's scoring semantics, error handling, and RootDirSource end to end;
`stateact check`."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from harness.cli import main
from harness.cli.check import run as check_run
from tasks.cache import cache_name
from tasks.evaluate import combine, evaluate
from tasks.getters import GetterContext, RootDirSource, SandboxSource, run_getter
from tasks.schema import load_task

GOLD_URL = "https://files.example.org/calc/gold.xlsx"


def save_book(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(path)


def write_task(folder: Path, evaluator: dict) -> Path:
    path = folder / "task.json"
    path.write_text(
        json.dumps({"id": "calc-1", "instruction": "Fix the sheet.", "evaluator": evaluator})
    )
    return path


def rule(value) -> dict:
    return {"type": "rule", "rules": value}


TABLE_EVALUATOR = {
    "func": "compare_table",
    "result": {"type": "vm_file", "path": "/home/user/Desktop/data.xlsx", "dest": "data.xlsx"},
    "expected": {"type": "cloud_file", "path": GOLD_URL, "dest": "data_gold.xlsx"},
    "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
}


@pytest.fixture
def calc_setup(tmp_path):
    root, cache = tmp_path / "root", tmp_path / "cache"
    cache.mkdir()
    save_book(cache / cache_name(GOLD_URL), [["item", "total"], ["a", 3], ["b", 4.5]])
    task = load_task(write_task(tmp_path, TABLE_EVALUATOR))
    return task, root, cache


def test_combine_rules():
    assert combine([0.4], "and") == 0.4
    assert combine([1.0, 0.5], "and") == 0.75
    assert combine([1.0, 0.0, 1.0], "and") == 0.0
    assert combine([0.2, 0.6], "or") == 0.6
    assert combine([0.2, 1.0, 0.0], "or") == 1.0


def test_end_to_end_with_root_dir(calc_setup):
    task, root, cache = calc_setup
    result_file = root / "home/user/Desktop/data.xlsx"
    save_book(result_file, [["item", "total"], ["a", 3], ["b", 4.5]])
    outcome = evaluate(task, RootDirSource(root), cache_dir=cache)
    assert outcome.score == 1.0 and outcome.error is None
    assert [(m.name, m.value) for m in outcome.metrics] == [("compare_table", 1.0)]
    save_book(result_file, [["item", "total"], ["a", 3], ["b", 5]])
    assert evaluate(task, RootDirSource(root), cache_dir=cache).score == 0.0


def test_errors_score_zero_with_a_reason(calc_setup, tmp_path):
    task, root, cache = calc_setup
    missing = evaluate(task, RootDirSource(root), cache_dir=cache)
    assert missing.score == 0.0
    assert missing.metrics[0].error == "the result file /home/user/Desktop/data.xlsx does not exist"
    save_book(root / "home/user/Desktop/data.xlsx", [["item"]])
    no_cache = evaluate(task, RootDirSource(root), cache_dir=None)
    assert no_cache.score == 0.0 and GOLD_URL in no_cache.error
    (root / "home/user/Desktop/data.xlsx").write_bytes(b"garbage")
    corrupt = evaluate(task, RootDirSource(root), cache_dir=cache)
    assert corrupt.score == 0.0 and "cannot be read" in corrupt.error
    bad_ref = {
        **TABLE_EVALUATOR,
        "options": {"rules": [{"type": "sheet_data", "sheet_idx0": "RNNope", "sheet_idx1": "EI0"}]},
    }
    save_book(root / "home/user/Desktop/data.xlsx", [["item"]])
    outcome = evaluate(
        load_task(write_task(tmp_path, bad_ref)), RootDirSource(root), cache_dir=cache
    )
    assert outcome.score == 0.0 and "'RNNope'" in outcome.error
    unknown = load_task(write_task(tmp_path, {"func": "no_such_metric", "result": rule(1)}))
    assert "unknown metric 'no_such_metric'" in evaluate(unknown, RootDirSource(root)).error
    command = load_task(
        write_task(
            tmp_path,
            {
                "func": "exact_match",
                "result": {"type": "vm_command_line", "command": "ls"},
                "expected": rule({"expected": ""}),
            },
        )
    )
    assert "live sandbox" in evaluate(command, RootDirSource(root)).error


def test_conj_semantics_through_evaluate(tmp_path):
    def task_with(conj, verdicts):
        funcs = ["exact_match"] * len(verdicts)
        return load_task(
            write_task(
                tmp_path,
                {
                    "func": funcs,
                    "conj": conj,
                    "result": [rule("yes")] * len(verdicts),
                    "expected": [rule({"expected": "yes" if ok else "no"}) for ok in verdicts],
                },
            )
        )

    source = RootDirSource(tmp_path)
    assert evaluate(task_with("and", [True, True]), source).score == 1.0
    assert evaluate(task_with("and", [True, False]), source).score == 0.0
    assert evaluate(task_with("or", [False, True]), source).score == 1.0
    assert evaluate(task_with("or", [False, False]), source).score == 0.0
    fuzzy = load_task(
        write_task(
            tmp_path,
            {
                "func": ["fuzzy_match", "no_such_metric"],
                "conj": "or",
                "result": [rule("hello wrld"), rule(1)],
                "expected": [rule({"expected": "hello world"}), None],
            },
        )
    )
    outcome = evaluate(fuzzy, source)
    assert (
        0.8 < outcome.score < 1.0 and outcome.metrics[1].error == "unknown metric 'no_such_metric'"
    )


def test_infeasible_and_final_fail(tmp_path):
    infeasible = load_task(write_task(tmp_path, {"func": "infeasible"}))
    source = RootDirSource(tmp_path)
    assert evaluate(infeasible, source, final_action="FAIL").score == 1.0
    assert evaluate(infeasible, source, final_action="DONE").score == 0.0
    assert evaluate(infeasible, source).score == 0.0
    feasible = load_task(
        write_task(
            tmp_path, {"func": "exact_match", "result": rule(1), "expected": rule({"expected": 1})}
        )
    )
    assert evaluate(feasible, source).score == 1.0
    assert evaluate(feasible, source, final_action="FAIL").score == 0.0


def test_multi_gives_local_and_cache_file_getters(tmp_path):
    root = tmp_path / "root"
    for name in ("a.txt", "b.txt"):
        (root / "home/user").mkdir(parents=True, exist_ok=True)
        (root / "home/user" / name).write_text(name)
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures/gold.txt").write_text("gold")
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    (outputs / "diff.out").write_text("")
    task = load_task(write_task(tmp_path, {"func": "exact_match"}))
    ctx = GetterContext(task, RootDirSource(root), None, tmp_path / "work", outputs_dir=outputs)
    multi = {
        "type": "vm_file",
        "path": ["/home/user/a.txt", "/home/user/b.txt", "/home/user/absent"],
        "dest": ["a", "b", "c"],
        "multi": True,
        "gives": [1, 2],
    }
    got = run_getter(multi, ctx)
    assert Path(got[0]).read_text() == "b.txt" and got[1] is None
    assert Path(run_getter({**multi, "gives": [0]}, ctx)).read_text() == "a.txt"
    assert run_getter({"type": "vm_file", "path": "/home/user/absent", "dest": "x"}, ctx) is None
    assert (
        Path(
            run_getter({"type": "local_file", "path": "fixtures/gold.txt", "dest": "g.txt"}, ctx)
        ).read_text()
        == "gold"
    )
    assert run_getter({"type": "cache_file", "path": "diff.out"}, ctx) == str(outputs / "diff.out")
    assert run_getter({"type": "cache_file", "path": "absent.out"}, ctx) is None


class FakeSandbox:
    """Records exec calls and serves files from a folder, as a live sandbox would."""

    def __init__(self, files: Path):
        self.files = files
        self.calls = []

    def exec(self, argv, timeout=120.0, user="user"):
        self.calls.append(argv)
        if argv[:2] == ["test", "-f"]:
            return (0 if (self.files / argv[2].lstrip("/")).is_file() else 1), ""
        return 0, "out:" + argv[-1]

    def copy_out(self, sandbox_path, host_path):
        shutil.copyfile(self.files / sandbox_path.lstrip("/"), host_path)


def test_sandbox_source(tmp_path):
    (tmp_path / "home/user").mkdir(parents=True)
    (tmp_path / "home/user/x.txt").write_text("x")
    sandbox = FakeSandbox(tmp_path)
    source = SandboxSource(sandbox)
    assert source.fetch_file("/home/user/x.txt", tmp_path / "got/x.txt").read_text() == "x"
    assert source.fetch_file("/home/user/none", tmp_path / "got/none") is None


class CombinedOutputSandbox:
    """Runs commands with real bash on this host and, like `Sandbox.exec`, mixes stderr into
    stdout."""

    def exec(self, argv, timeout=120.0, user="user"):
        done = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout
        )
        return done.returncode, done.stdout


def test_vm_command_line_returns_stdout_only():
    # OSWorld's getter returns the command's stdout; stderr never reaches the metric.
    source = SandboxSource(CombinedOutputSandbox())
    noisy = "echo out; echo err >&2; printf 'two words' # a trailing comment"
    assert source.run_command(noisy, shell=True)["output"] == "out\ntwo words"
    listed = source.run_command(["bash", "-c", "echo a; echo b >&2; exit 3"], shell=False)
    assert listed == {"output": "a\n", "returncode": 3}
    assert (
        source.run_command(["printf", "%s|", "x y", "$HOME"], shell=False)["output"] == "x y|$HOME|"
    )


def test_check_command(calc_setup, tmp_path, capsys):
    task, root, cache = calc_setup
    save_book(root / "home/user/Desktop/data.xlsx", [["item", "total"], ["a", 3], ["b", 4.5]])
    args = argparse.Namespace(
        task=str(task.base_dir / "task.json"),
        root=str(root),
        cache=str(cache),
        work_dir=str(tmp_path / "w"),
        final_action=None,
    )
    assert check_run(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {
        "task_id": "calc-1",
        "score": 1.0,
        "metrics": [{"name": "compare_table", "value": 1.0, "error": None}],
        "error": None,
    }
    assert (tmp_path / "w/evaluation/metric0/result/data.xlsx").is_file()
    assert check_run(argparse.Namespace(**{**vars(args), "cache": None})) == 0
    assert json.loads(capsys.readouterr().out)["score"] == 0.0
    argv = ["check", str(tmp_path / "nope.json"), "--root", str(root)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and err.count("\n") == 1
    assert main(["check", args.task, "--root", str(tmp_path / "noroot")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_evaluate_never_raises_on_the_osworld_tasks(tmp_path):
    files = sorted(Path("/work/shared/osworld-tasks/examples").glob("*/*.json"))
    if not files:
        pytest.skip("OSWorld task files are not present")
    source = RootDirSource(tmp_path)
    for path in files:
        outcome = evaluate(load_task(path), source, cache_dir=tmp_path)
        assert outcome.score == 0.0, path
        assert len(outcome.metrics) == len(load_task(path).evaluator.funcs)
