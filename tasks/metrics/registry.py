"""The metric registry: OSWorld metric names mapped to the functions that implement them.

A metric takes the getter results (`result`, then `expected` when the task has one) plus the
task's `options` as keyword arguments, and returns a float in [0, 1]. Modules in this package
register their metrics with `@metric("name")`; `tasks.metrics` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable

MetricFn = Callable[..., float]
METRICS: dict[str, MetricFn] = {}


def metric(name: str) -> Callable[[MetricFn], MetricFn]:
    """Register `fn` under the OSWorld metric `name`."""

    def register(fn: MetricFn) -> MetricFn:
        if name in METRICS:
            raise ValueError(f"metric {name!r} is registered twice")
        METRICS[name] = fn
        return fn

    return register


def get_metric(name: str) -> MetricFn:
    """The metric called `name`; raises KeyError with a clear message when there is none."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}") from None
