"""OSWorld metrics. Importing this package registers every metric in `registry.METRICS`."""

from tasks.metrics import documents, general, pdfs, slides, table  # noqa: F401
from tasks.metrics.registry import METRICS, get_metric, metric

__all__ = ["METRICS", "get_metric", "metric"]
