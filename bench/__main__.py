"""Run the benchmarks: `python -m bench [NAME ...]`, NAME one of sandbox harness desktop suite gate
report seeds ray density pool services (default: all)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

MODULES = [
    "sandbox",
    "harness",
    "desktop",
    "suite",
    "gate",
    "report",
    "seeds",
    "ray",
    "density",
    "pool",
    "services",
]
RESULTS = Path(__file__).parent / "results.json"


def main(names: list[str]) -> int:
    rows = []
    for name in names or MODULES:
        module = importlib.import_module(f"bench.{name}_bench")
        print(f"running {name} benchmarks ...", file=sys.stderr)
        rows += module.rows()
    table = Table(title="StateAct benchmarks (medians)")
    for column in ("name", "ours", "runs", "baseline", "baseline", "ratio", "note"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r.name,
            f"{r.median_s * 1000:.2f} ms",
            str(r.runs),
            r.baseline,
            f"{r.baseline_median_s * 1000:.2f} ms" if r.baseline_median_s else "-",
            f"{r.ratio:.2f}x" if r.ratio else "-",
            r.note,
        )
    Console().print(table)
    existing = {r["name"]: r for r in json.loads(RESULTS.read_text())} if RESULTS.exists() else {}
    existing.update({r.name: r.as_json() for r in rows})
    RESULTS.write_text(json.dumps(list(existing.values()), indent=2) + "\n")
    print(f"wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
