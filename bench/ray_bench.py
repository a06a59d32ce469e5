"""Suite throughput with `--ray` on Ray's own test cluster (one and two simulated nodes on this
machine, 127.0.0.1 only, one sandbox slot per node) beside the local runner with as many slots."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

from harness.apps.ray.cluster import RESOURCE, RayOptions
from harness.apps.ray.suite import run_suite_on_ray
from harness.apps.suite import ensure_suite_fixtures, run_suite
from harness.run.config import RunConfig

from . import Row, row
from .suite_bench import SLICE, slice_paths

# Ray reads these when imported: no usage report, and 127.0.0.1 is not swapped for an outward
# address.
os.environ.update(RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")


@contextlib.contextmanager
def simulated_nodes(count: int):
    from ray.cluster_utils import Cluster

    args = dict(num_cpus=1, resources={RESOURCE: 1}, node_ip_address="127.0.0.1")
    cluster = Cluster(initialize_head=True, head_node_args={**args, "include_dashboard": False})
    try:
        for _ in range(count - 1):
            cluster.add_node(**args)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()


def timed(run) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="stateact-ray-bench-") as out:
        started = time.perf_counter()
        summary = run(out)
        return (time.perf_counter() - started) / len(SLICE), summary["mean_score"] or 0.0


def rows() -> list[Row]:
    ensure_suite_fixtures(slice_paths())
    config = RunConfig(model="script/oracle")
    result = []
    for nodes in (1, 2):
        local_s, _ = timed(lambda out, n=nodes: run_suite(slice_paths(), config, out, parallel=n))
        with simulated_nodes(nodes) as address:
            options = RayOptions(address=address)
            ray_s, score = timed(
                lambda out, o=options: run_suite_on_ray(slice_paths(), config, out, o)
            )
        note = (
            f"{60 / ray_s:.1f} tasks/min on Ray vs {60 / local_s:.1f} local; mean score "
            f"{score:.2f}; Ray overhead {ray_s - local_s:+.1f} s/task (2 cores shared by all nodes)"
        )
        result.append(
            row(
                f"suite wall time per task, oracle, {len(SLICE)} bundled tasks, --ray, "
                f"{nodes} simulated node(s) x 1 slot",
                ray_s,
                len(SLICE),
                f"local runner, --parallel {nodes}",
                local_s,
                note,
            )
        )
    return result
