"""One model-request budget across a Ray cluster: workers in different processes that call the
real Anthropic client (over HTTP, to a local fake) are spaced by the shared token bucket."""

from __future__ import annotations

import time

import pytest

from harness.apps.ray.cluster import TokenBucket, lost_task, use_limiter
from harness.models import ModelConfig
from harness.models.anthropic_model import AnthropicModel
from harness.models.throttle import before_request
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.ray_helpers import loopback_cluster, require_ray

ray = require_ray()

RATE_PER_MIN = 120  # one request every 0.5 s across the cluster
CALLS_PER_WORKER = 3


class TimedServer(FakeAnthropicServer):
    """The fake API, noting when each request arrived."""

    def handle(self, path, headers, body):
        self.arrivals = getattr(self, "arrivals", []) + [time.monotonic()]
        return super().handle(path, headers, body)


def worker_calls(base_url: str, limiter) -> int:
    """In a Ray worker: install the cluster's budget and make a few real model calls."""
    use_limiter(limiter)
    model = AnthropicModel("claude-sonnet-4-5", ModelConfig(base_url=base_url, api_key="k"))
    for _ in range(CALLS_PER_WORKER):
        model.complete("", [{"role": "user", "content": "hi"}], [])
    return CALLS_PER_WORKER


def test_token_bucket_spaces_reservations():
    bucket = TokenBucket(rate=2.0)
    waits = [bucket.reserve() for _ in range(4)]
    assert waits[0] == 0.0
    assert waits[1:] == pytest.approx([0.5, 1.0, 1.5], abs=0.05)


def test_no_gate_means_no_wait():
    use_limiter(None)
    started = time.monotonic()
    before_request()
    assert time.monotonic() - started < 0.01


def test_workers_share_one_budget():
    replies = [{"text": "ok"}] * (2 * CALLS_PER_WORKER)
    with TimedServer(replies) as server, loopback_cluster(slots_per_node=(2,)) as (cluster, _):
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        try:
            limiter = ray.remote(TokenBucket).options(num_cpus=0).remote(RATE_PER_MIN / 60)
            call = ray.remote(worker_calls).options(num_cpus=0)
            refs = [call.remote(server.base_url, limiter) for _ in range(2)]
            assert sum(ray.get(refs, timeout=120)) == 2 * CALLS_PER_WORKER
        finally:
            ray.shutdown()
    arrivals = sorted(server.arrivals)
    assert len(arrivals) == 2 * CALLS_PER_WORKER
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    # Six requests at two per second: at least 2.5 s from first to last, no two at once.
    assert arrivals[-1] - arrivals[0] >= 2.4, gaps
    assert min(gaps) >= 0.3, gaps


def test_a_task_without_result_is_lost_or_failed():
    status, reason = lost_task(ray, ray.exceptions.WorkerCrashedError(), retries=3)
    assert status == "node_lost" and "lost 4 time(s)" in reason
    failed = ray.exceptions.RayTaskError("run_suite_task", "tb", ValueError("bad task"))
    assert lost_task(ray, failed, retries=3) == (
        "error",
        "the task failed on its node: ValueError('bad task')",
    )
