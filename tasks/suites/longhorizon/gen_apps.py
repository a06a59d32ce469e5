"""Fixtures and gold files of the cross-application (lh-x-*), GUI (lh-gui-*) and web (lh-web-*)
tasks."""

from __future__ import annotations

import base64
import json
import random
import sqlite3
import statistics
from collections import defaultdict
from pathlib import Path

import docx
import openpyxl
from pptx import Presentation
from pptx.dml.color import RGBColor

from tasks.suites.longhorizon.common import (
    BuilderRegistry,
    TaskFiles,
    money,
    write_csv,
    write_docx,
    write_xlsx,
)
from tasks.suites.longhorizon.gen_calc import sales_orders
from tasks.suites.longhorizon.gen_slides import add_slide

registry = BuilderRegistry()
build_all = registry.build_all
SITE_DIR = Path(__file__).resolve().parent / "site"


@registry.task("lh-x-001")
def survey(files: TaskFiles) -> None:
    rng = random.Random(701)
    questions = ["Q1", "Q2", "Q3", "Q4", "Q5"]
    rows = [
        [f"R{i:03d}", rng.choice(["Ops", "Sales", "R&D"]), *[rng.randint(1, 5) for _ in questions]]
        for i in range(1, 33)
    ]
    header = ["RespondentID", "Team", *questions]
    write_csv(files.fixture("survey.csv"), [header, *rows])
    stats = []
    for k, q in enumerate(questions, start=2):
        column = [r[k] for r in rows]
        stats.append([q, round(statistics.mean(column), 2), min(column), max(column)])
    write_xlsx(
        files.gold("survey.xlsx"),
        {"Responses": [header, *rows], "Stats": [["Question", "Mean", "Min", "Max"], *stats]},
    )
    lowest = min(stats, key=lambda s: (s[1], s[0]))[0]
    write_docx(
        files.gold("survey_report.docx"),
        [("Title", "Survey Results"), f"Responses: {len(rows)}"]
        + [f"{q}: mean {m:.2f} (min {lo}, max {hi})" for q, m, lo, hi in stats]
        + [f"Lowest-rated question: {lowest}"],
    )


RATES = {"EUR": 1.0, "USD": 0.9213, "GBP": 1.1702, "JPY": 0.006128, "CHF": 1.0457}


@registry.task("lh-x-002")
def invoices_in_eur(files: TaskFiles) -> None:
    rng = random.Random(702)
    rows = [
        [f"INV-{300 + i}", rng.choice(sorted(RATES)), round(rng.uniform(100, 9000), 2)]
        for i in range(20)
    ]
    for row in rows:
        if row[1] == "JPY":
            row[2] = float(rng.randint(15_000, 900_000))
    write_csv(files.fixture("invoices.csv"), [["InvoiceID", "Currency", "Amount"], *rows])
    table = "".join(f"<tr><td>{c}</td><td>{r}</td></tr>" for c, r in RATES.items() if c != "EUR")
    html = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Treasury "
        "rates</title></head><body>"
        f"<h1>Reference rates, 30 September 2024</h1><p>1 unit of currency = rate EUR.</p>"
        "<table id='rates'><tr><th>Currency</th><th>EUR per "
        f"unit</th></tr>{table}</table></body></html>"
    )
    files.fixture("rates/index.html").write_text(html, encoding="utf-8")
    out, totals = [], defaultdict(float)
    for inv, cur, amount in rows:
        eur = money(amount * RATES[cur])
        out.append([inv, cur, amount, RATES[cur], eur])
        totals[cur] += eur
    write_xlsx(
        files.gold("invoices_eur.xlsx"),
        {
            "Invoices": [["InvoiceID", "Currency", "Amount", "RateToEUR", "AmountEUR"], *out],
            "Totals": [
                ["Currency", "AmountEUR"],
                *[[c, money(v)] for c, v in sorted(totals.items())],
            ],
        },
    )
    grand = money(sum(r[4] for r in out))
    largest = max(out, key=lambda r: r[4])
    write_docx(
        files.gold("eur_memo.docx"),
        [
            ("Title", "Invoices in EUR"),
            f"Total of {len(out)} invoices: EUR {grand:,.2f}",
            f"Largest invoice: {largest[0]} (EUR {largest[4]:,.2f})",
            "Rates: treasury reference rates of 30 September 2024",
        ],
    )


@registry.task("lh-x-003")
def region_deck(files: TaskFiles) -> None:
    header = ["Date", "Region", "Rep", "Product", "Units", "UnitPrice"]
    orders = sales_orders(703, 45)
    write_xlsx(files.fixture("regional_sales.xlsx"), {"Orders": [header, *orders]})
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = "Regional Sales Q3"
    slide.placeholders[1].text = "Generated from regional_sales.xlsx"
    for region in sorted({o[1] for o in orders}):
        mine = [o for o in orders if o[1] == region]
        by_product = defaultdict(float)
        for o in mine:
            by_product[o[3]] += o[4] * o[5]
        revenue = sum(by_product.values())
        add_slide(
            prs,
            1,
            f"Region: {region}",
            [
                f"Revenue: ${money(revenue):,.2f}",
                f"Orders: {len(mine)}",
                f"Top product: {max(by_product, key=by_product.get)}",
            ],
        )
    prs.save(files.gold("regional_sales.pptx"))


DOC_TABLES = {
    "Headcount": [["Team", "2023", "2024"], ["Ops", 12, 15], ["Sales", 20, 18], ["R&D", 31, 37]],
    "Budget": [["Item", "EUR"], ["Cloud", 48200.5], ["Travel", 12900.0], ["Training", 7600.25]],
    "Milestones": [["Milestone", "Quarter", "Owner"], ["Beta", "Q1", "Ravi"], ["GA", "Q3", "Dana"]],
}


@registry.task("lh-x-004")
def docx_tables(files: TaskFiles) -> None:
    document = docx.Document()
    document.add_paragraph("Annual Plan", style="Title")
    for n, (caption, rows) in enumerate(DOC_TABLES.items(), start=1):
        document.add_paragraph(f"Some context before table {n}.")
        document.add_paragraph(f"Table {n}: {caption}")
        table = document.add_table(rows=len(rows), cols=len(rows[0]))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                table.cell(r, c).text = f"{value:,.2f}" if isinstance(value, float) else str(value)
    document.save(files.fixture("annual_plan.docx"))
    write_xlsx(files.gold("plan_tables.xlsx"), DOC_TABLES)


@registry.task("lh-x-005")
def ticket_report(files: TaskFiles) -> None:
    rng = random.Random(705)
    path = files.fixture("tickets.db")
    path.unlink(missing_ok=True)
    tickets = []
    for i in range(1, 41):
        tickets.append(
            (
                f"TCK-{i:03d}",
                f"Issue number {i} in {rng.choice(['billing', 'login', 'export', 'sync'])}",
                rng.choice(["P1", "P2", "P3"]),
                rng.choice(["open", "closed", "closed"]),
                f"2024-08-{rng.randint(1, 28):02d}",
                rng.choice(["ana", "bo", "cy", "dee"]),
            )
        )
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE tickets (key TEXT PRIMARY KEY, title TEXT, priority TEXT, state TEXT,"
            " opened TEXT, owner TEXT)"
        )
        db.executemany("INSERT INTO tickets VALUES (?,?,?,?,?,?)", tickets)
    db.close()
    open_p1 = sorted(
        (t for t in tickets if t[2] == "P1" and t[3] == "open"), key=lambda t: (t[4], t[0])
    )
    write_docx(
        files.gold("p1_open.docx"),
        [("Title", "Open P1 Tickets")]
        + [f"{t[0]} (opened {t[4]}, owner {t[5]}): {t[1]}" for t in open_p1]
        + [f"Open P1 tickets: {len(open_p1)}"],
    )
    counts = {
        p: sum(1 for t in tickets if t[2] == p and t[3] == "open") for p in ("P1", "P2", "P3")
    }
    write_csv(files.gold("open_by_priority.csv"), [["priority", "open_tickets"], *counts.items()])


@registry.task("lh-gui-001")
def dashboard_view(files: TaskFiles) -> None:
    rng = random.Random(801)
    sheets = {
        "Dashboard": [["KPI", "Jan", "Feb", "Mar"]]
        + [[f"KPI {k}", *[rng.randint(1, 99) for _ in range(3)]] for k in range(1, 12)],
        "Sheet2": [["raw", "values"]] + [[rng.random(), rng.random()] for _ in range(10)],
    }
    write_xlsx(files.fixture("dashboard.xlsx"), sheets)
    wb = openpyxl.load_workbook(files.fixtures / "dashboard.xlsx")
    wb["Dashboard"].sheet_view.zoomScale = 150
    wb["Dashboard"].freeze_panes = "B3"
    wb["Sheet2"].title = "Raw"
    wb.save(files.gold("dashboard.xlsx"))


@registry.task("lh-gui-002")
def format_cells(files: TaskFiles) -> None:
    rng = random.Random(802)
    rows = [
        [
            f"Account {i}",
            rng.randint(1000, 50000),
            rng.randint(-9000, 9000),
            round(rng.uniform(-0.3, 0.5), 4),
        ]
        for i in range(1, 21)
    ]
    write_xlsx(
        files.fixture("accounts.xlsx"),
        {"Accounts": [["Account", "Balance", "Change", "ChangePct"], *rows]},
    )


@registry.task("lh-gui-003")
def slide_colours(files: TaskFiles) -> None:
    def deck(styled: bool) -> Presentation:
        prs = Presentation()
        for n, title in enumerate(["Brand refresh", "Palette", "Typography", "Rollout"]):
            slide = add_slide(
                prs, 0 if n == 0 else 1, title, None if n == 0 else [f"Item {n}.1", f"Item {n}.2"]
            )
            if styled:
                slide.background.fill.solid()
                slide.background.fill.fore_color.rgb = RGBColor(0x1F, 0x38, 0x64)
                for run in slide.shapes.title.text_frame.paragraphs[0].runs:
                    run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
        return prs

    deck(False).save(files.fixture("brand.pptx"))
    deck(True).save(files.gold("brand.pptx"))


def copy_site(files: TaskFiles, name: str, data: object | None = None) -> None:
    """Copy `site/<name>` into the fixtures, with the task data base64-encoded into `data.js`."""
    for source in (SITE_DIR / name).iterdir():
        files.fixture(f"site/{source.name}").write_bytes(source.read_bytes())
    if data is not None:
        blob = base64.b64encode(json.dumps(data).encode()).decode()
        files.fixture("site/data.js").write_text(f'window.APP_DATA = "{blob}";\n', encoding="utf-8")


def quote_total(plan: str, seats: int, addons: list[str], annual: bool) -> float:
    """Python twin of site/quote/pricing.js; the gold quotes come from here."""
    base = {"starter": 9.0, "team": 19.0, "business": 39.0}[plan]
    rate = 1.0 if seats <= 10 else 0.9 if seats <= 50 else 0.8
    total = base * seats * rate + sum(
        {"sso": 4.0 * seats, "audit": 49.0, "support": 99.0}[a] for a in addons
    )
    return money(total * (0.85 if annual else 1.0))


QUOTE_REQUESTS = [
    ["REQ-1", "team", 8, "audit", "monthly"],
    ["REQ-2", "business", 35, "sso;support", "annual"],
    ["REQ-3", "starter", 120, "", "annual"],
    ["REQ-4", "team", 51, "sso;audit;support", "monthly"],
]


@registry.task("lh-web-001")
def quote_site(files: TaskFiles) -> None:
    copy_site(files, "quote")
    write_csv(
        files.fixture("quote_requests.csv"),
        [["request_id", "plan", "seats", "addons", "billing"], *QUOTE_REQUESTS],
    )
    rows = [
        [
            rid,
            "{:.2f}".format(
                quote_total(plan, seats, [a for a in addons.split(";") if a], billing == "annual")
            ),
        ]
        for rid, plan, seats, addons, billing in QUOTE_REQUESTS
    ]
    write_csv(files.gold("quotes.csv"), [["request_id", "monthly_total"], *rows])


@registry.task("lh-web-002")
def stock_admin(files: TaskFiles) -> None:
    rng = random.Random(902)
    items = [
        {
            "sku": f"K-{rng.randint(1000, 9999)}",
            "name": f"Kit {i}",
            "qty": rng.randint(0, 30),
            "reorder": rng.randint(5, 15),
        }
        for i in range(1, 38)
    ]
    copy_site(files, "stock", items)
    low = sorted((it for it in items if it["qty"] < it["reorder"]), key=lambda it: it["sku"])
    write_csv(
        files.gold("low_stock.csv"),
        [["sku", "name", "qty"], *[[i["sku"], i["name"], i["qty"]] for i in low]],
    )


def release_notes(seed: int) -> list[dict]:
    rng = random.Random(seed)
    topics = [
        "performance tweaks",
        "Security fix for session cookies",
        "new export formats",
        "UI polish",
        "security hardening of the upload endpoint",
        "bug fixes",
        "dependency updates (security advisories)",
    ]
    notes = []
    for i in range(14):
        major, minor = 2 + i // 6, i % 6
        notes.append(
            {
                "version": f"{major}.{minor}.0",
                "date": f"2024-{1 + i * 10 // 14:02d}-{rng.randint(1, 28):02d}",
                "notes": [rng.choice(topics) for _ in range(rng.randint(1, 3))],
            }
        )
    return notes


@registry.task("lh-web-003")
def release_site(files: TaskFiles) -> None:
    copy_site(files, "releases", release_notes(903))
