"""`stateact suite … --ray ADDRESS|auto`: the suite's tasks as Ray tasks, one sandbox slot each.

The driver is the local runner (`SuiteRun`) with another way to run the tasks: each one runs on the
node Ray picks, in a scratch run folder there, and comes back as its result and the run folder's
bytes; the driver unpacks it into OUT/runs/<task id> and writes results.jsonl, summary.json and
report.html exactly as the local runner does, with the node in every row. A task whose node is lost
is started again on another node (up to `RayOptions.retries` times); after that it gets one row
with status `node_lost`. Ctrl-C cancels the remote tasks, whose sandboxes close as they stop.

Task files are read on the node at the driver's path (a shared folder or the same checkout);
tasks of StateAct's own suites are read from the node's installed copy.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from harness.run.config import RunConfig

from ..suite import BUNDLED_SUITES, SuiteRun, ensure_suite_fixtures, task_name
from ..suite_task import ModelFactory, TaskExecutor, bare_result, write_bare
from .cluster import (
    RayCluster,
    RayOptions,
    lost_task,
    node_identity,
    pack_folder,
    ready_node,
    unpack_folder,
)

NODE_LOST = "node_lost"


def bundled_part(path: Path) -> str | None:
    """The task file's path inside StateAct's own suites, which every node has installed."""
    return str(path.relative_to(BUNDLED_SUITES)) if path.is_relative_to(BUNDLED_SUITES) else None


def run_suite_task(
    config: RunConfig,
    model_factory: ModelFactory,
    gate_model_factory: ModelFactory | None,
    task_file: str,
    bundled: str | None,
    limiter,
    image_archive: str | None,
) -> dict:
    """On a node: run one task file in a scratch run folder; its result, folder bytes and node."""
    path = BUNDLED_SUITES / bundled if bundled else Path(task_file)
    ready_node(config, limiter, image_archive)
    ensure_suite_fixtures([path])  # cheap once built; a fresh node builds its bundled fixtures
    with tempfile.TemporaryDirectory(prefix="stateact-ray-") as scratch:
        run_dir = Path(scratch) / "run"
        executor = TaskExecutor(config, model_factory, gate_model_factory)
        result, _task = executor.execute(path, run_dir)
        return {"result": result, "archive": pack_folder(run_dir), **node_identity()}


class RaySuiteRun(SuiteRun):
    """A suite run whose tasks run on a Ray cluster; OUT is written by the driver as locally."""

    def __init__(self, *args, options: RayOptions, **kwargs):
        super().__init__(*args, **kwargs)
        self.options = options
        self.cluster: RayCluster | None = None

    def run(self) -> dict:
        self.check_out_dir()  # before any cluster starts
        self.options.local_slots = self.parallel
        self.cluster = RayCluster(self.options)
        try:
            self.cluster.prepare(self.config)
            return super().run()
        finally:
            self.cluster.close()

    def _run_all(self, results: dict[Path, dict]) -> None:
        remote = self.cluster.remote(run_suite_task)
        pending = {}
        for path in self.task_paths:
            finished = self.finished_line(path)
            if finished is not None:
                results[path] = finished
                continue
            ref = remote.remote(
                self.config,
                self.model_factory,
                self.gate_model_factory,
                str(path),
                bundled_part(path),
                self.cluster.limiter,
                self.options.image_archive,
            )
            pending[ref] = path

        def collect(ref, path: Path) -> None:
            results[path] = self._collect(ref, path)

        self.cluster.gather(pending, collect, on_interrupt=self.stopping.set)

    def _collect(self, ref, path: Path) -> dict:
        """The task's row from its Ray result; a task lost with its nodes gets a row saying so."""
        ray = self.cluster.ray
        run_dir = self.run_dir_of(path)
        if run_dir.exists():
            shutil.rmtree(run_dir)  # an interrupted earlier run: this one replaces it
        try:
            reply = ray.get(ref)
        except ray.exceptions.RayError as exc:
            status, reason = lost_task(ray, exc, self.options.retries)
            result = write_bare(run_dir, bare_result(task_name(path), status, reason))
            return self.record(path, run_dir, result, None, node=None)
        unpack_folder(reply.pop("archive"), run_dir)
        result = reply.pop("result")
        return self.record(path, run_dir, result, None, **reply)

def run_suite_on_ray(
    paths: list[str | Path],
    config: RunConfig,
    out_dir: str | Path,
    options: RayOptions,
    *,
    parallel: int = 1,
    resume: bool = False,
    model_factory: ModelFactory | None = None,
    gate_model_factory: ModelFactory | None = None,
    on_result=None,
    suite_options=None,
) -> dict:
    """`run_suite` on a Ray cluster; `parallel` is the slot count of a cluster `auto` starts."""
    suite = RaySuiteRun(
        paths,
        config,
        out_dir,
        parallel,
        resume,
        model_factory,
        gate_model_factory,
        on_result,
        suite_options,
        options=options,
    )
    return suite.run()
