"""`stateact batch … --ray ADDRESS|auto`: each file as a Ray task with one sandbox slot.

The input file's bytes travel with the task; on the node it is run by the local batch's own
`run_item` in a scratch folder, and the run folder and the output file come back to the driver,
which writes OUT/<output>, OUT/runs/<file name>/ and summary.csv as the local batch does. A file
whose run had not finished is run again from the start (its milestones live on the old node).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.kernel.records import write_json_atomic

from ..batch_item import BatchItem, BatchJob, run_item
from ..suite_task import bare_result
from .cluster import (
    RayCluster,
    RayOptions,
    lost_task,
    node_identity,
    pack_folder,
    ready_node,
    unpack_folder,
)


def run_batch_item(item: BatchItem, data: bytes, job: BatchJob, limiter, image_archive) -> dict:
    """On a node: run one file in a scratch folder; its row, run folder and output bytes."""
    ready_node(job.config, limiter, image_archive)
    with tempfile.TemporaryDirectory(prefix="stateact-ray-batch-") as scratch:
        folder = Path(scratch)
        (folder / "in").mkdir()
        source = folder / "in" / item.name
        source.write_bytes(data)
        local = BatchItem(
            source,
            item.sandbox_path,
            item.instruction,
            item.output_sandbox,
            folder / "out" / item.output_host.name,
            folder / "run",
        )
        local.output_host.parent.mkdir()
        row = run_item(local, job.resumed(False))
        output = local.output_host.read_bytes() if local.output_host.is_file() else None
        return {
            "row": row,
            "archive": pack_folder(local.run_dir),
            "output": output,
            **node_identity(),
        }


def run_items_on_ray(
    items: list[BatchItem], job: BatchJob, options: RayOptions, one: Callable[..., dict]
) -> list[dict]:
    """Run the batch's files on the cluster; `one(item, row)` records each row as it comes."""
    rows: dict[str, dict] = {}
    todo = []
    for item in items:
        if job.resume and (item.run_dir / "result.json").is_file():  # finished: read back here
            rows[item.name] = one(item, run_item(item, job))
        else:
            todo.append(item)
    cluster = RayCluster(options)
    try:
        if todo:
            cluster.prepare(job.config)
        remote = cluster.remote(run_batch_item)
        pending = {}
        for item in todo:
            args = (job, cluster.limiter, options.image_archive)
            pending[remote.remote(item, item.source.read_bytes(), *args)] = item

        def collect(ref, item: BatchItem) -> None:
            rows[item.name] = one(item, _collect(cluster.ray, ref, item, options))

        cluster.gather(pending, collect)
    finally:
        cluster.close()
    return [rows[item.name] for item in items]


def _collect(ray, ref, item: BatchItem, options: RayOptions) -> dict:
    """The file's row on the driver: its run folder and output unpacked where the local batch
    puts them."""
    if item.run_dir.exists():
        shutil.rmtree(item.run_dir)
    try:
        reply = ray.get(ref)
    except ray.exceptions.RayError as exc:
        status, reason = lost_task(ray, exc, options.retries)
        result = bare_result(f"batch-{item.name}", status, reason)
        item.run_dir.mkdir(parents=True)
        write_json_atomic(item.run_dir / "result.json", result)
        row = {"file": str(item.source), "status": status, "gate_passed": None}
        return {**row, "cost_usd": 0.0, "output": "", "score": None, "error": reason, "node": None}
    unpack_folder(reply.pop("archive"), item.run_dir)
    output = reply.pop("output")
    if output is not None:
        item.output_host.write_bytes(output)
    row = {
        **reply.pop("row"),
        "file": str(item.source),
        "output": str(item.output_host) if output is not None else "",
        **reply,
    }
    write_json_atomic(
        item.run_dir / "batch_item.json", {**row, "output_sandbox": item.output_sandbox}
    )
    return row
