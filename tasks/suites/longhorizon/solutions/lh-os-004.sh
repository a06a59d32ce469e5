#!/usr/bin/env bash
# Reference solution: aggregate the server CSV into the fleet JSON report.
set -euo pipefail
mkdir -p /home/user/report
python3 - <<'PY'
import csv, json
from collections import defaultdict
rows = list(csv.DictReader(open("/home/user/servers.csv", newline="")))
status = {s: 0 for s in ("up", "down", "maintenance")}
cpus = defaultdict(list)
for r in rows:
    status[r["status"]] += 1
    cpus[r["datacenter"]].append(int(r["cpu_pct"]))
report = {
    "total": len(rows),
    "by_status": status,
    "overloaded": sorted(r["host"] for r in rows if r["status"] == "up" and (int(r["cpu_pct"]) > 85 or int(r["mem_pct"]) > 90)),
    "datacenters": {dc: {"hosts": len(v), "avg_cpu": round(sum(v) / len(v), 1)} for dc, v in cpus.items()},
}
json.dump(report, open("/home/user/report/fleet.json", "w"), indent=2)
PY
