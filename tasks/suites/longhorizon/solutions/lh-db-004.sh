#!/usr/bin/env bash
# Reference solution: the schema migration as one SQL transaction.
set -euo pipefail
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/home/user/app/tracker.db")
db.executescript("""
BEGIN;
ALTER TABLE tasks ADD COLUMN status TEXT NOT NULL DEFAULT 'open';
UPDATE tasks SET status = 'done' WHERE completed_at IS NOT NULL;
CREATE INDEX idx_tasks_assignee ON tasks(assignee);
CREATE VIEW overdue_tasks AS
    SELECT id, title, assignee, due_date FROM tasks WHERE status = 'open' AND due_date < '2024-10-01';
COMMIT;
""")
PY
