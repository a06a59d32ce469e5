#!/usr/bin/env bash
# Reference solution: rename pictures by capture date and per-day order, log old -> new names.
set -euo pipefail
python3 - <<'PY'
import csv, json, os
from collections import defaultdict
folder = "/home/user/photos"
meta = json.load(open("/home/user/photo_metadata.json"))
per_day, log = defaultdict(int), []
for name, taken in sorted(meta.items(), key=lambda kv: kv[1]):
    day = taken[:10]
    per_day[day] += 1
    new = f"{day}_{per_day[day]:02d}.jpg"
    os.rename(os.path.join(folder, name), os.path.join(folder, new))
    log.append((name, new))
with open(os.path.join(folder, "rename_log.csv"), "w", newline="") as fh:
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(["old_name", "new_name"])
    writer.writerows(sorted(log))
PY
