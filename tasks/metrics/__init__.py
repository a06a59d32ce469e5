"""OSWorld metrics. Importing this package registers every metric in `registry.METRICS`."""

from tasks.metrics import (  # noqa: F401
    app_configs,
    archives,
    audio,
    chrome_state,
    document_format,
    document_layout,
    documents,
    general,
    image_similarity,
    image_text,
    images,
    mail_folders,
    media,
    misc_files,
    pdfs,
    python_tests,
    slides,
    slides_compare,
    table,
    video,
    vlc_config,
    vlc_status,
)
from tasks.metrics.registry import METRICS, get_metric, metric

__all__ = ["METRICS", "get_metric", "metric"]
