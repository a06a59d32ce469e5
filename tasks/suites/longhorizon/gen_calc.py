"""Fixtures and gold workbooks of the spreadsheet tasks (lh-calc-*)."""

from __future__ import annotations

import random
from collections import defaultdict

from tasks.suites.longhorizon.common import (
    BuilderRegistry,
    TaskFiles,
    add_sheet,
    money,
    new_workbook,
    write_csv,
    write_xlsx,
)

registry = BuilderRegistry()
build_all = registry.build_all

REGIONS = ["North", "South", "East", "West"]
REPS = ["Avery", "Blake", "Casey", "Devon", "Emery", "Finley"]
PRODUCTS = ["Widget", "Gadget", "Sprocket", "Gizmo", "Doohickey"]


def sales_orders(seed: int, count: int) -> list[list]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        day = f"2024-{7 + i * 3 // count:02d}-{rng.randint(1, 28):02d}"
        rows.append(
            [
                day,
                rng.choice(REGIONS),
                rng.choice(REPS),
                rng.choice(PRODUCTS),
                rng.randint(1, 50),
                round(rng.uniform(3, 120), 2),
            ]
        )
    return rows


@registry.task("lh-calc-001")
def regional_summary(files: TaskFiles) -> None:
    header = ["Date", "Region", "Rep", "Product", "Units", "UnitPrice"]
    orders = sales_orders(101, 40)
    write_xlsx(files.fixture("sales_q3.xlsx"), {"Orders": [header, *orders]})
    wb = new_workbook()
    ws = add_sheet(wb, "Orders", [header + ["Revenue"], *orders])
    for r in range(2, len(orders) + 2):
        ws.cell(r, 7, f"=E{r}*F{r}").number_format = "#,##0.00"
    ws.freeze_panes = "A2"
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for row in orders:
        totals[row[1]][0] += row[4] * row[5]
        totals[row[1]][1] += 1
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])
    add_sheet(
        wb,
        "Summary",
        [["Region", "Revenue", "Orders"]] + [[k, money(v[0]), v[1]] for k, v in ranked],
    )
    wb.save(files.gold("sales_q3_gold.xlsx"))


def grade_of(avg: float) -> str:
    return "A" if avg >= 90 else "B" if avg >= 80 else "C" if avg >= 70 else "F"


@registry.task("lh-calc-002")
def gradebook(files: TaskFiles) -> None:
    rng = random.Random(102)
    header = ["ID", "Name", "Status", "HW1", "HW2", "Midterm", "Final"]
    names = [
        "Ada",
        "Ben",
        "Cleo",
        "Dmitri",
        "Eve",
        "Farah",
        "Gus",
        "Hana",
        "Ivo",
        "Jun",
        "Kofi",
        "Lena",
        "Milo",
        "Nia",
        "Omar",
        "Pia",
        "Quin",
        "Rosa",
        "Sven",
        "Tara",
    ]
    rows = []
    for i, name in enumerate(names):
        status = "W" if i in (3, 9, 15) else "Active"
        rows.append([1000 + i, name, status, *[rng.randint(55, 100) for _ in range(4)]])
    write_xlsx(files.fixture("gradebook.xlsx"), {"Students": [header, *rows]})
    wb = new_workbook()
    gold_rows = []
    counts = {"A": 0, "B": 0, "C": 0, "F": 0}
    for row in rows:
        avg = float(f"{sum(row[3:7]) / 4 + 1e-9:.1f}")
        grade = grade_of(avg)
        gold_rows.append([*row, avg, grade])
        if row[2] == "Active":
            counts[grade] += 1
    ws = add_sheet(wb, "Students", [header + ["Average", "Grade"], *gold_rows])
    for r, row in enumerate(rows, start=2):
        ws.cell(r, 8).number_format = "0.0"
        ws.row_dimensions[r].hidden = row[2] == "W"
    add_sheet(wb, "Stats", [["Grade", "Count"], *[[g, c] for g, c in counts.items()]])
    wb.save(files.gold("gradebook_gold.xlsx"))


@registry.task("lh-calc-003")
def reorder_list(files: TaskFiles) -> None:
    rng = random.Random(103)
    suppliers = [
        ["S01", "Acme Parts"],
        ["S02", "Bolt & Nut Co"],
        ["S03", "Coil Works"],
        ["S04", "Delta Supply"],
    ]
    stock = []
    for i in range(30):
        level = rng.randint(10, 60)
        on_hand = rng.randint(0, 90)
        stock.append(
            [
                f"SKU-{500 + rng.randint(0, 399):03d}{i:02d}",
                f"Part {i + 1}",
                on_hand,
                level,
                rng.choice(suppliers)[0],
            ]
        )
    write_xlsx(
        files.fixture("inventory.xlsx"),
        {
            "Stock": [["SKU", "Description", "OnHand", "ReorderLevel", "SupplierID"], *stock],
            "Suppliers": [["SupplierID", "SupplierName"], *suppliers],
        },
    )
    names = dict(suppliers)
    low = sorted((r for r in stock if r[2] < r[3]), key=lambda r: r[0])
    wb = new_workbook()
    add_sheet(
        wb,
        "Reorder",
        [["SKU", "Description", "SupplierName", "OrderQty"]]
        + [[r[0], r[1], names[r[4]], 2 * r[3] - r[2]] for r in low],
    )
    wb.save(files.gold("reorder_gold.xlsx"))


MONTHS6 = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"]


@registry.task("lh-calc-004")
def budget_totals(files: TaskFiles) -> None:
    rng = random.Random(104)
    cats = [
        "Rent",
        "Salaries",
        "Utilities",
        "Travel",
        "Software",
        "Marketing",
        "Training",
        "Supplies",
    ]
    rows = [[c, *[round(rng.uniform(200, 9000), 2) for _ in MONTHS6]] for c in cats]
    write_xlsx(files.fixture("budget_h1.xlsx"), {"Budget": [["Category", *MONTHS6], *rows]})
    wb = new_workbook()
    ws = add_sheet(wb, "Budget", [["Category", *MONTHS6, "Total"], *rows, ["Total"]])
    last = len(rows) + 1
    for r in range(2, last + 1):
        ws.cell(r, 8, f"=SUM(B{r}:G{r})")
    for c in "BCDEFGH":
        ws[f"{c}{last + 1}"] = f"=SUM({c}2:{c}{last})"
    for row in ws.iter_rows(min_row=2, min_col=2, max_col=8):
        for cell in row:
            cell.number_format = "#,##0.00"
    ws.freeze_panes = "B2"
    wb.save(files.gold("budget_h1_gold.xlsx"))


@registry.task("lh-calc-005")
def pivot_by_code(files: TaskFiles) -> None:
    rng = random.Random(105)
    cats = ["Hardware", "Services", "Licenses", "Support", "Training"]
    months = ["Jan", "Feb", "Mar", "Apr"]
    tx = [
        [f"T{i:04d}", rng.choice(cats), rng.choice(months), round(rng.uniform(50, 2500), 2)]
        for i in range(60)
    ]
    write_xlsx(
        files.fixture("transactions.xlsx"),
        {"Transactions": [["TxID", "Category", "Month", "Amount"], *tx]},
    )
    sums: dict[tuple[str, str], float] = defaultdict(float)
    for _, cat, month, amount in tx:
        sums[cat, month] += amount
    body = []
    for cat in sorted(cats):
        values = [money(sums[cat, m]) for m in months]
        body.append([cat, *values, money(sum(sums[cat, m] for m in months))])
    grand = [money(sum(sums[c, m] for c in cats)) for m in months]
    body.append(["Grand Total", *grand, money(sum(sums.values()))])
    wb = new_workbook()
    add_sheet(wb, "Pivot", [["Category", *months, "Total"], *body])
    wb.save(files.gold("pivot_gold.xlsx"))


@registry.task("lh-calc-006")
def clean_contacts(files: TaskFiles) -> None:
    rng = random.Random(106)
    first = [
        "maria",
        "JOHN",
        "li",
        "Olga",
        "pedro",
        "AMIR",
        "sara",
        "tom",
        "Yuki",
        "noah",
        "ella",
        "ravi",
    ]
    last = [
        "garcia",
        "SMITH",
        "wei",
        "petrova",
        "alvarez",
        "KHAN",
        "berg",
        "o'neil",
        "tanaka",
        "ross",
        "moreau",
        "iyer",
    ]
    people = []
    for f, surname in zip(first, last, strict=True):
        digits = "".join(str(rng.randint(0, 9)) for _ in range(10))
        people.append(
            (f, surname, f"{f.lower()}.{surname.lower().replace(chr(39), '')}@example.org", digits)
        )
    messy_phone = [
        lambda d: f"{d[:3]}-{d[3:6]}-{d[6:]}",
        lambda d: f"({d[:3]}) {d[3:6]} {d[6:]}",
        lambda d: d,
        lambda d: f"{d[:3]}.{d[3:6]}.{d[6:]}",
    ]
    rows = []
    for i, (f, surname, email, digits) in enumerate(people):
        rows.append(
            [
                f"  {f} {surname} ",
                f" {email.upper() if i % 3 == 0 else email} ",
                messy_phone[i % 4](digits),
            ]
        )
    for i in (2, 7, 10):  # duplicates by email, differently written
        f, surname, email, digits = people[i]
        rows.insert(i * 2 % len(rows) + 1, [f"{f.upper()} {surname}", email.title(), digits])
    write_xlsx(files.fixture("contacts.xlsx"), {"Contacts": [["Name", "Email", "Phone"], *rows]})
    seen, clean = set(), []
    for name, email, phone in rows:
        key = email.strip().lower()
        if key in seen:
            continue
        seen.add(key)
        digits = "".join(ch for ch in phone if ch.isdigit())
        words = [
            w.capitalize() if "'" not in w else "'".join(p.capitalize() for p in w.split("'"))
            for w in name.split()
        ]
        clean.append([" ".join(words), key, f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"])
    clean.sort(key=lambda r: (r[0].split()[-1].lower(), r[0].lower()))
    write_csv(files.gold("contacts_clean.csv"), [["Name", "Email", "Phone"], *clean])


@registry.task("lh-calc-007")
def timesheet(files: TaskFiles) -> None:
    rng = random.Random(107)
    staff = ["Kim", "Lopez", "Nguyen", "Okafor"]
    days = ["2024-05-06", "2024-05-07", "2024-05-08", "2024-05-09", "2024-05-10"]
    rows = []
    for day in days:
        for who in staff:
            start = rng.choice([7, 8, 8, 9]) * 60 + rng.choice([0, 15, 30, 45])
            end = start + rng.randint(7 * 4, 11 * 4) * 15
            rows.append(
                [day, who, f"{start // 60:02d}:{start % 60:02d}", f"{end // 60:02d}:{end % 60:02d}"]
            )
    write_xlsx(
        files.fixture("timesheet.xlsx"), {"Log": [["Date", "Employee", "Start", "End"], *rows]}
    )
    wb = new_workbook()
    hours_rows, totals = [], defaultdict(float)
    for row in rows:
        minutes = [int(t[:2]) * 60 + int(t[3:]) for t in row[2:]]
        hours = (minutes[1] - minutes[0]) / 60
        totals[row[1]] += hours
        hours_rows.append([*row, hours])
    add_sheet(wb, "Log", [["Date", "Employee", "Start", "End", "Hours"], *hours_rows])
    add_sheet(
        wb,
        "Weekly",
        [["Employee", "TotalHours", "Overtime"]]
        + [[who, totals[who], max(0.0, totals[who] - 40)] for who in sorted(staff)],
    )
    wb.save(files.gold("timesheet_gold.xlsx"))


@registry.task("lh-calc-008")
def split_by_region(files: TaskFiles) -> None:
    header = ["Date", "Region", "Rep", "Product", "Units", "UnitPrice"]
    orders = sales_orders(108, 36)
    write_xlsx(files.fixture("master_orders.xlsx"), {"Master": [header, *orders]})
    sheets = {"Master": [header, *orders]}
    for region in sorted(REGIONS):
        sheets[region] = [header, *[r for r in orders if r[1] == region]]
    write_xlsx(files.gold("master_orders_gold.xlsx"), sheets)


@registry.task("lh-calc-009")
def amortization(files: TaskFiles) -> None:
    principal, annual_rate, months = 18500.0, 0.069, 36
    write_xlsx(
        files.fixture("loan.xlsx"),
        {
            "Parameters": [
                ["Field", "Value"],
                ["Principal", principal],
                ["AnnualRate", annual_rate],
                ["Months", months],
            ]
        },
    )
    r = annual_rate / 12
    payment = money(principal * r / (1 - (1 + r) ** -months))
    balance, rows = principal, []
    for m in range(1, months + 1):
        interest = money(balance * r)
        principal_part = money(payment - interest)
        balance = money(balance - principal_part)
        rows.append([m, payment, interest, principal_part, balance])
    wb = new_workbook()
    add_sheet(
        wb,
        "Parameters",
        [
            ["Field", "Value"],
            ["Principal", principal],
            ["AnnualRate", annual_rate],
            ["Months", months],
        ],
    )
    add_sheet(wb, "Schedule", [["Month", "Payment", "Interest", "Principal", "Balance"], *rows])
    wb.save(files.gold("loan_gold.xlsx"))


@registry.task("lh-calc-010")
def statement_formats(files: TaskFiles) -> None:
    rng = random.Random(110)
    lines = [
        "Revenue",
        "Cost of sales",
        "Gross profit",
        "Opex",
        "EBITDA",
        "Depreciation",
        "EBIT",
        "Tax",
        "Net income",
    ]
    rows = [
        [
            f"GL{4000 + i * 10}",
            line,
            round(rng.uniform(1e4, 9e5), 2),
            round(rng.uniform(-0.2, 0.4), 4),
        ]
        for i, line in enumerate(lines)
    ]
    header = ["InternalCode", "Line", "Amount", "Change"]
    write_xlsx(files.fixture("statement.xlsx"), {"Sheet1": [header, *rows]})
    wb = new_workbook()
    ws = add_sheet(wb, "FY2024", [header, *rows])
    for r in range(2, len(rows) + 2):
        ws.cell(r, 3).number_format = "$#,##0.00"
        ws.cell(r, 4).number_format = "0.0%"
    ws.column_dimensions["A"].hidden = True
    ws.freeze_panes = "C2"
    add_sheet(wb, "Notes", [["Prepared by", "Finance"]])
    wb.save(files.gold("statement_gold.xlsx"))


@registry.task("lh-calc-011")
def consolidate_quarters(files: TaskFiles) -> None:
    rng = random.Random(111)
    catalog = ["Anchor", "Bracket", "Clamp", "Dowel", "Eyebolt", "Flange", "Grommet", "Hinge"]
    sheets, units = {}, defaultdict(lambda: [0, 0, 0, 0])
    for q in range(4):
        sold = rng.sample(catalog, rng.randint(5, 7))
        rows = [[p, rng.randint(10, 400)] for p in sold]
        sheets[f"Q{q + 1}"] = [["Product", "Units"], *rows]
        for p, n in rows:
            units[p][q] = n
    write_xlsx(files.fixture("quarterly_units.xlsx"), sheets)
    annual = [[p, *units[p], sum(units[p])] for p in sorted(units)]
    sheets["Annual"] = [["Product", "Q1", "Q2", "Q3", "Q4", "Total"], *annual]
    write_xlsx(files.gold("quarterly_units_gold.xlsx"), sheets)


@registry.task("lh-calc-012")
def kpi_sheet(files: TaskFiles) -> None:
    header = ["Date", "Region", "Rep", "Product", "Units", "UnitPrice"]
    write_xlsx(files.fixture("orders_kpi.xlsx"), {"Data": [header, *sales_orders(112, 50)]})


def kpi_values(orders: list[list]) -> dict[str, object]:
    """The KPI figures of lh-calc-012; its checker's references must equal these (see the suite
    test)."""
    revenue = [r[4] * r[5] for r in orders]
    by_region: dict[str, float] = defaultdict(float)
    for row, value in zip(orders, revenue, strict=True):
        by_region[row[1]] += value
    return {
        "total": money(sum(revenue)),
        "average": money(sum(revenue) / len(revenue)),
        "top_region": max(by_region, key=by_region.get),
        "big_orders": sum(1 for v in revenue if v > 1000),
    }
