"""OSWorld metrics. Importing this package registers every metric in `registry.METRICS`."""

from tasks.metrics import app_configs, documents, general, images, pdfs, slides, table  # noqa: F401
from tasks.metrics.registry import METRICS, get_metric, metric

__all__ = ["METRICS", "get_metric", "metric"]
