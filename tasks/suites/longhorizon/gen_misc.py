"""Fixtures and gold files of the file-system (lh-os-*), SQLite (lh-db-*) and infeasible
(lh-inf-*) tasks.

File trees are shipped as one tar per task (setup unpacks it), so a task needs a single download
step.
"""

from __future__ import annotations

import io
import random
import sqlite3
import tarfile
from collections import Counter, defaultdict

from tasks.suites.longhorizon.common import (
    BuilderRegistry,
    TaskFiles,
    write_csv,
    write_json,
    write_xlsx,
)

registry = BuilderRegistry()
build_all = registry.build_all


def write_tar(path, files: dict[str, bytes]) -> None:
    """A tar of `files` (name -> bytes) with fixed owners and times, so rebuilds give the same
    archive."""
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1704096000, 0o644
            tar.addfile(info, io.BytesIO(data))


DOWNLOADS = [
    "holiday.JPG",
    "scan_0007.png",
    "logo.gif",
    "invoice_2291.pdf",
    "notes.txt",
    "Budget.XLSX",
    "thesis_draft.docx",
    "backup.zip",
    "photos.tar.gz",
    "setup.exe",
    "readme.md",
    "song.mp3",
    "diagram.PNG",
    "minutes.TXT",
    "data.tar.gz",
    "random.bin",
]
CATEGORIES = {
    "images": (".jpg", ".png", ".gif"),
    "documents": (".pdf", ".txt", ".docx", ".xlsx", ".md"),
    "archives": (".zip", ".tar.gz"),
}


def category_of(name: str) -> str:
    lower = name.lower()
    return next((cat for cat, exts in CATEGORIES.items() if lower.endswith(exts)), "other")


@registry.task("lh-os-001")
def organize_downloads(files: TaskFiles) -> None:
    rng = random.Random(401)
    contents = {f"Downloads/{n}": f"{n}\n".encode() * rng.randint(1, 40) for n in DOWNLOADS}
    write_tar(files.fixture("downloads.tar"), contents)
    rows = sorted((category_of(n), n, len(contents[f"Downloads/{n}"])) for n in DOWNLOADS)
    write_csv(files.gold("manifest.csv"), [["category", "filename", "size_bytes"], *rows])


@registry.task("lh-os-002")
def rename_photos(files: TaskFiles) -> None:
    rng = random.Random(402)
    meta, contents = {}, {}
    for i in range(1, 13):
        name = f"IMG_{4100 + i * 7}.jpg"
        day = rng.choice(["2024-06-01", "2024-06-02", "2024-06-04"])
        meta[name] = f"{day}T{rng.randint(7, 20):02d}:{rng.randint(0, 59):02d}:{i:02d}"
        contents[f"photos/{name}"] = b"\xff\xd8\xff\xe0" + rng.randbytes(64) + b"\xff\xd9"
    write_tar(files.fixture("photos.tar"), contents)
    write_json(files.fixture("photo_metadata.json"), meta)
    per_day: dict[str, int] = defaultdict(int)
    log = []
    for name, taken in sorted(meta.items(), key=lambda kv: kv[1]):
        per_day[taken[:10]] += 1
        log.append([name, f"{taken[:10]}_{per_day[taken[:10]]:02d}.jpg"])
    write_csv(files.gold("rename_log.csv"), [["old_name", "new_name"], *sorted(log)])


@registry.task("lh-os-003")
def archive_logs(files: TaskFiles) -> None:
    rng = random.Random(403)
    days = [
        "02-20",
        "02-22",
        "02-25",
        "02-27",
        "02-29",
        "03-01",
        "03-02",
        "03-05",
        "03-08",
        "03-10",
    ]
    contents = {}
    for day in days:
        lines = [
            f"2024-{day} {rng.choice(['INFO', 'WARN', 'ERROR'])} request {rng.randint(1, 999)}"
            for _ in range(rng.randint(3, 30))
        ]
        contents[f"logs/app-2024-{day}.log"] = ("\n".join(lines) + "\n").encode()
    contents["logs/README"] = b"application logs, one file per day\n"
    write_tar(files.fixture("logs.tar"), contents)
    old = sorted(n.split("/")[1] for n in contents if n.startswith("logs/app-2024-02"))
    total = sum(contents[f"logs/{n}"].count(b"\n") for n in old)
    files.gold("index.txt").write_text(
        "\n".join(old) + f"\nTOTAL_LINES={total}\n", encoding="utf-8"
    )


@registry.task("lh-os-004")
def fleet_report(files: TaskFiles) -> None:
    rng = random.Random(404)
    rows = []
    for i in range(24):
        rows.append(
            [
                f"srv-{i:02d}",
                rng.choice(["fra1", "ams2", "lon1"]),
                rng.randint(5, 99),
                rng.randint(10, 99),
                rng.choices(["up", "down", "maintenance"], [8, 1, 1])[0],
            ]
        )
    write_csv(
        files.fixture("servers.csv"),
        [["host", "datacenter", "cpu_pct", "mem_pct", "status"], *rows],
    )


def fleet_summary(rows: list[list]) -> dict:
    """The JSON report lh-os-004 asks for, given the CSV rows (strings as read back)."""
    by_dc: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        by_dc[row[1]].append(int(row[2]))
    return {
        "total": len(rows),
        "by_status": {
            status: Counter(r[4] for r in rows)[status] for status in ("down", "maintenance", "up")
        },
        "overloaded": sorted(
            r[0] for r in rows if r[4] == "up" and (int(r[2]) > 85 or int(r[3]) > 90)
        ),
        "datacenters": {
            dc: {"hosts": len(v), "avg_cpu": round(sum(v) / len(v), 1)}
            for dc, v in sorted(by_dc.items())
        },
    }


@registry.task("lh-os-005")
def dedupe_projects(files: TaskFiles) -> None:
    rng = random.Random(405)
    blobs = [f"content block {k}\n".encode() * rng.randint(1, 9) for k in range(8)]
    paths = [
        "alpha/main.py",
        "alpha/utils.py",
        "alpha/docs/guide.md",
        "beta/main.py",
        "beta/lib/utils.py",
        "beta/notes.txt",
        "gamma/guide.md",
        "gamma/old/main.py",
        "gamma/data.csv",
        "gamma/copy of notes.txt",
        "delta/report.md",
        "delta/archive/report.md",
    ]
    choice = [0, 1, 2, 0, 1, 3, 2, 4, 5, 3, 6, 6]
    write_tar(
        files.fixture("projects.tar"),
        {f"projects/{p}": blobs[c] for p, c in zip(paths, choice, strict=True)},
    )


# --- SQLite
# -------------------------------------------------------------------------------------------


def make_db(path, script: str, rows: dict[str, list[tuple]]) -> None:
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(script)
        for table, values in rows.items():
            marks = ",".join("?" * len(values[0]))
            db.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
    db.close()


SHOP_SCHEMA = """
CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT UNIQUE NOT NULL, name TEXT NOT NULL,
                       price REAL NOT NULL);
CREATE TABLE price_audit (id INTEGER PRIMARY KEY AUTOINCREMENT,
                          product_id INTEGER NOT NULL REFERENCES products(id),
                          old_price REAL NOT NULL, new_price REAL NOT NULL,
                          changed_on TEXT NOT NULL);
"""


@registry.task("lh-db-001")
def price_update(files: TaskFiles) -> None:
    rng = random.Random(501)
    products = [
        (i, f"P-{100 + i * 3}", f"Product {i}", round(rng.uniform(2, 200), 2)) for i in range(1, 21)
    ]
    make_db(files.fixture("shop.db"), SHOP_SCHEMA, {"products": products})
    changes = [
        [p[1], f"{round(p[3] * rng.uniform(0.8, 1.3), 2):.2f}"] for p in rng.sample(products, 7)
    ]
    changes.append([products[4][1], f"{products[4][3]:.2f}"])  # unchanged price: no audit row
    changes.insert(3, ["P-999", "12.00"])  # unknown SKU
    write_csv(files.fixture("price_changes.csv"), [["sku", "new_price"], *changes])
    old = {p[1]: p[3] for p in products}
    report = [
        [sku, f"{old[sku]:.2f}", new, f"{(float(new) - old[sku]) / old[sku] * 100:.1f}"]
        for sku, new in changes
        if sku in old and round(old[sku], 2) != float(new)
    ]
    write_csv(
        files.gold("price_report.csv"), [["sku", "old_price", "new_price", "change_pct"], *report]
    )


CRM_SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, city TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     order_date TEXT NOT NULL, amount REAL NOT NULL, status TEXT NOT NULL);
"""
CUSTOMERS = [
    (1, "Alder Corp", "ops@alder.example", "Leeds"),
    (2, "Birch LLC", "hi@birch.example", "York"),
    (3, "Cedar Inc", "team@cedar.example", "Bath"),
    (4, "Alder Corp", "OPS@Alder.example", "Leeds"),
    (5, "Dogwood Ltd", "info@dogwood.example", "Hull"),
    (6, "Elm & Co", "elm@elm.example", "Ely"),
    (7, "Birch LLC", "Hi@Birch.Example", "York"),
    (8, "Fir Group", "fir@fir.example", "Wells"),
]


def crm_orders(seed: int) -> list[tuple]:
    rng = random.Random(seed)
    return [
        (
            i,
            rng.randint(1, 8),
            f"2024-{rng.randint(6, 10):02d}-{rng.randint(1, 28):02d}",
            round(rng.uniform(20, 900), 2),
            rng.choices(["complete", "cancelled", "pending"], [6, 1, 1])[0],
        )
        for i in range(1, 61)
    ]


@registry.task("lh-db-002")
def customer_report(files: TaskFiles) -> None:
    customers = [c for c in CUSTOMERS if c[0] not in (4, 7)]
    orders = [o for o in crm_orders(502) if o[1] not in (4, 7)]
    make_db(files.fixture("crm.db"), CRM_SCHEMA, {"customers": customers, "orders": orders})
    totals: dict[int, list] = defaultdict(lambda: [0, 0.0])
    for _, cid, day, amount, status in orders:
        if status == "complete" and "2024-07-01" <= day <= "2024-09-30":
            totals[cid][0] += 1
            totals[cid][1] += amount
    names = {c[0]: c for c in customers}
    rows = sorted(
        ([names[c][1], names[c][3], n, round(t, 2)] for c, (n, t) in totals.items()),
        key=lambda r: -r[3],
    )
    write_xlsx(
        files.gold("customer_totals.xlsx"),
        {"ByCustomer": [["Customer", "City", "Orders", "Total"], *rows]},
    )


@registry.task("lh-db-003")
def merge_customers(files: TaskFiles) -> None:
    make_db(
        files.fixture("crm.db"), CRM_SCHEMA, {"customers": CUSTOMERS, "orders": crm_orders(503)}
    )
    write_csv(files.gold("merge_log.csv"), [["removed_id", "kept_id"], [4, 1], [7, 2]])


@registry.task("lh-db-004")
def migrate_tasks(files: TaskFiles) -> None:
    rng = random.Random(504)
    rows = []
    for i in range(1, 19):
        due = f"2024-{rng.randint(8, 11):02d}-{rng.randint(1, 28):02d}"
        done = (
            f"2024-{rng.randint(8, 10):02d}-{rng.randint(1, 28):02d}"
            if rng.random() < 0.4
            else None
        )
        rows.append((i, f"Task {i}", rng.choice(["ana", "bo", "cy"]), due, done))
    script = (
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL, assignee TEXT, due_date "
        "TEXT, completed_at TEXT);"
    )
    make_db(files.fixture("tracker.db"), script, {"tasks": rows})


# --- Infeasible
# ---------------------------------------------------------------------------------------


@registry.task("lh-inf-001")
def infeasible_publish(files: TaskFiles) -> None:
    rng = random.Random(601)
    write_xlsx(
        files.fixture("pipeline.xlsx"),
        {
            "Pipeline": [["Deal", "Stage", "Value"]]
            + [
                [f"Deal {i}", rng.choice(["Lead", "Proposal", "Won"]), rng.randint(1000, 90000)]
                for i in range(15)
            ]
        },
    )


@registry.task("lh-inf-002")
def infeasible_salary(files: TaskFiles) -> None:
    rng = random.Random(602)
    write_csv(
        files.fixture("employees.csv"),
        [["id", "name", "department", "start_date"]]
        + [
            [
                i,
                f"Employee {i}",
                rng.choice(["Ops", "Sales", "R&D"]),
                f"20{rng.randint(15, 23)}-0{rng.randint(1, 9)}-15",
            ]
            for i in range(1, 26)
        ],
    )


@registry.task("lh-inf-003")
def infeasible_video(files: TaskFiles) -> None:
    from pptx import Presentation

    prs = Presentation()
    for title in ("All-hands", "Roadmap", "Recording"):
        prs.slides.add_slide(prs.slide_layouts[5]).shapes.title.text = title
    prs.save(files.fixture("allhands.pptx"))
