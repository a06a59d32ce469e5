"""Suites and batches on a Ray cluster: `cluster.py` (the cluster, node preparation, limits),
`suite.py` and `batch.py` (what runs on the nodes and how results come back). Ray itself loads
only when a cluster starts."""
