"""OSWorld's `update_browse_history` setup step: visits written into Chrome's History database.

OSWorld copies an empty History database from the web; offline, the profile's own database is used,
made first (when the profile has none) by starting the browser headless once. Chrome keeps the file
locked while it runs, so the step must come before the task launches `google-chrome`, as in OSWorld.
"""

from __future__ import annotations

import json
import shlex

from sandboxes.base import SANDBOX_HOME

HISTORY = f"{SANDBOX_HOME}/.config/google-chrome/Default/History"
CHROME_EPOCH_OFFSET_S = 11644473600
"""Seconds from 1601-01-01 (Chrome's time origin) to 1970-01-01."""
TYPED_LINK = 805306368
"""`visits.transition` of a link visit that ended a navigation chain (Chrome's page-transition
bits)."""

WRITE = r"""
import json, sqlite3, sys, time
rows, path = json.loads(sys.argv[1]), sys.argv[2]
offset, transition = int(sys.argv[3]), int(sys.argv[4])
db = sqlite3.connect(path, timeout=5)
for row in rows:
    when = int((time.time() - float(row.get("visit_time_from_now_in_seconds", 0)) + offset) * 1e6)
    cur = db.execute(
        "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
        "VALUES (?, ?, 1, 0, ?, 0)", (row["url"], row.get("title", ""), when))
    db.execute(
        "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
        "VALUES (?, ?, 0, ?, 0, 0)", (cur.lastrowid, when, transition))
db.commit()
print(f"wrote {len(rows)} visits")
"""


def history_script(history: list[dict]) -> str:
    """Shell text that makes the profile's History if missing, then writes the visits into it."""
    rows = [row for row in history if isinstance(row, dict) and row.get("url")]
    make = (
        f"[ -f {HISTORY} ] || {{ timeout 20 /usr/bin/chromium --headless --no-sandbox "
        f"--disable-gpu --user-data-dir={SANDBOX_HOME}/.config/google-chrome "
        "--no-first-run about:blank >/dev/null 2>&1 & pid=$!; "
        f"for i in $(seq 1 100); do [ -f {HISTORY} ] && sleep 1 && break; sleep 0.2; done; "
        "kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; "
    )
    args = [json.dumps(rows), HISTORY, str(CHROME_EPOCH_OFFSET_S), str(TYPED_LINK)]
    return make + f"python3 -c {shlex.quote(WRITE)} " + " ".join(shlex.quote(a) for a in args)
