"""Fixtures and gold documents of the Writer tasks (lh-writer-*)."""

from __future__ import annotations

import random
import shutil
from collections import defaultdict

from tasks.suites.longhorizon.common import BuilderRegistry, TaskFiles, money, write_csv, write_docx

registry = BuilderRegistry()
build_all = registry.build_all

CLAUSES = [
    (
        "Scope",
        "Contoso Consulting will deliver the services listed in Schedule A to Northwind Traders.",
    ),
    ("Fees", "Northwind Traders will pay the fees in Schedule B within 30 days of each invoice."),
    (
        "Term",
        "This agreement runs for twelve months from 1 March 2024 unless ended under Clause 6.",
    ),
    ("Exclusivity", "Northwind Traders will not engage another provider for the same services."),
    (
        "Confidentiality",
        "Each party keeps the other's information confidential, subject to Clause 7.",
    ),
    (
        "Termination",
        "Either party may end this agreement with 60 days' written notice; Clause 5 survives.",
    ),
    ("Governing Law", "This agreement is governed by the laws of England and Wales."),
]


def contract_paragraphs(party: str, date: str, drop: int | None) -> list:
    renumber = {i: i for i in range(1, 8)}
    if drop:
        renumber = {i: i - (i > drop) for i in range(1, 8) if i != drop}
    paras = [
        ("Title", "Services Agreement"),
        f'This Services Agreement is made on {date} between {party} (the "Client") and '
        'Contoso Consulting (the "Provider").',
    ]
    for number, (title, body) in enumerate(CLAUSES, start=1):
        if number not in renumber:
            continue
        for old in range(7, 0, -1):
            if old in renumber:
                body = body.replace(f"Clause {old}", f"Clause #{renumber[old]}")
        body = body.replace("Clause #", "Clause ").replace("Northwind Traders", party)
        body = body.replace("1 March 2024", date)
        paras += [("Heading 1", f"{renumber[number]}. {title}"), body]
    return paras


@registry.task("lh-writer-001")
def contract(files: TaskFiles) -> None:
    write_docx(
        files.fixture("contract.docx"),
        contract_paragraphs("Northwind Traders", "1 March 2024", None),
    )
    shutil.copy(files.fixtures / "contract.docx", files.gold("contract_original.docx"))
    paras = contract_paragraphs("Fabrikam Ltd", "15 April 2024", 4)
    paras += ["Signed for the Client: Fabrikam Ltd", "Signed for the Provider: Contoso Consulting"]
    write_docx(files.gold("contract_v2.docx"), paras)


@registry.task("lh-writer-002")
def report_from_csv(files: TaskFiles) -> None:
    rng = random.Random(202)
    products, reps, regions = (
        ["Widget", "Gadget", "Gizmo", "Sprocket"],
        ["Avery", "Blake", "Casey"],
        ["North", "South", "East", "West"],
    )
    rows = [
        [
            f"O-{i:03d}",
            rng.choice(regions),
            rng.choice(reps),
            rng.choice(products),
            rng.randint(1, 40),
            round(rng.uniform(5, 90), 2),
        ]
        for i in range(45)
    ]
    write_csv(
        files.fixture("q3_sales.csv"),
        [["OrderID", "Region", "Rep", "Product", "Units", "UnitPrice"], *rows],
    )
    template = [
        ("Title", "Quarterly Sales Report {{QUARTER}}"),
        "Total revenue for the quarter was {{TOTAL_REVENUE}} across {{ORDER_COUNT}} orders.",
        "The best-selling product by revenue was {{TOP_PRODUCT}}, and the top sales "
        "rep was {{BEST_REP}}.",
        ("Heading 1", "Revenue by region"),
        "{{REGION_LINES}}",
        ("Heading 1", "Notes"),
        "Figures are computed from q3_sales.csv (revenue = Units x UnitPrice).",
    ]
    write_docx(files.fixture("report_template.docx"), template)
    revenue = defaultdict(lambda: defaultdict(float))
    for _, region, rep, product, units, price in rows:
        for key, name in (("region", region), ("rep", rep), ("product", product)):
            revenue[key][name] += units * price
    total = sum(revenue["region"].values())
    values = {
        "{{QUARTER}}": "Q3 2024",
        "{{TOTAL_REVENUE}}": f"${money(total):,.2f}",
        "{{ORDER_COUNT}}": str(len(rows)),
        "{{TOP_PRODUCT}}": max(revenue["product"], key=revenue["product"].get),
        "{{BEST_REP}}": max(revenue["rep"], key=revenue["rep"].get),
    }
    gold = []
    for item in template:
        style, text = item if isinstance(item, tuple) else (None, item)
        if text == "{{REGION_LINES}}":
            gold += [f"{r}: ${money(v):,.2f}" for r, v in sorted(revenue["region"].items())]
            continue
        for key, value in values.items():
            text = text.replace(key, value)
        gold.append((style, text) if style else text)
    write_docx(files.gold("report_final.docx"), gold)


REFERENCES = [
    "Zhang, L. Scaling agents with state (2023).",
    "Adams, R. Spreadsheet semantics (2019).",
    "Moreau, C. Long-horizon planning (2021).",
    "Baker, T. Desktop automation at scale (2022).",
    "Adams, R. Spreadsheet semantics (2019).",
    "Kumar, P. Verifiers for agents (2024).",
    "Baker, T. Desktop automation at scale (2022).",
    "Ito, H. Evaluating computer use (2020).",
]


@registry.task("lh-writer-003")
def bibliography(files: TaskFiles) -> None:
    body = [
        ("Title", "Notes on Computer-Use Agents"),
        "Early systems scripted the desktop directly [4] and evaluated it by hand [8].",
        "Later work added verifiers [6] and state-based planning [1], building on [3].",
        "Spreadsheet work relies on cell semantics [2], also discussed in [5] and [7].",
    ]
    refs = [f"[{i}] {text}" for i, text in enumerate(REFERENCES, start=1)]
    write_docx(files.fixture("paper.docx"), [*body, ("Heading 1", "References"), *refs])
    unique = sorted(set(REFERENCES))
    new_number = {i: unique.index(text) + 1 for i, text in enumerate(REFERENCES, start=1)}
    fixed = []
    for item in body:
        if isinstance(item, tuple):
            fixed.append(item)
            continue
        for old in range(len(REFERENCES), 0, -1):
            item = item.replace(f"[{old}]", f"[#{new_number[old]}]")
        fixed.append(item.replace("[#", "["))
    gold_refs = [f"[{i}] {text}" for i, text in enumerate(unique, start=1)]
    write_docx(files.gold("paper_gold.docx"), [*fixed, ("Heading 1", "References"), *gold_refs])


RECIPIENTS = [
    ["C101", "Priya Raman", "Lumen Labs", "1250.00", "2024-06-30", "overdue"],
    ["C102", "Jonas Weber", "Kestrel GmbH", "480.50", "2024-07-15", "paid"],
    ["C103", "Amara Okoye", "Baobab Foods", "3075.25", "2024-06-15", "overdue"],
    ["C104", "Luis Ortega", "Ortega & Hijos", "99.99", "2024-07-31", "open"],
    ["C105", "Mei Chen", "Harbor Logistics", "2210.00", "2024-05-31", "overdue"],
]
LETTER = [
    "Dear {{name}},",
    "Our records show that invoice {{id}} for {{company}} of ${{amount}} was due on {{due_date}}.",
    "Please arrange payment within 14 days or contact us if you believe this is in error.",
    "Kind regards,",
    "Accounts Receivable, Contoso Consulting",
]


@registry.task("lh-writer-004")
def mail_merge(files: TaskFiles) -> None:
    write_csv(
        files.fixture("recipients.csv"),
        [["id", "name", "company", "amount", "due_date", "status"], *RECIPIENTS],
    )
    write_docx(files.fixture("letter_template.docx"), LETTER)
    for rid, name, company, amount, due, status in RECIPIENTS:
        if status != "overdue":
            continue
        fields = {
            "{{id}}": rid,
            "{{name}}": name,
            "{{company}}": company,
            "{{amount}}": amount,
            "{{due_date}}": due,
        }
        letter = []
        for line in LETTER:
            for key, value in fields.items():
                line = line.replace(key, value)
            letter.append(line)
        write_docx(files.gold(f"letter_{rid}.docx"), letter)


ACTIONS = [
    ("Omar", "circulate the revised budget", "2024-09-20"),
    ("Lena", "book the venue for the offsite", "2024-09-13"),
    ("Omar", "send the vendor shortlist", "2024-09-13"),
    ("Farah", "update the risk register", "2024-09-27"),
    ("Ben", "draft the hiring plan", "2024-09-20"),
]


@registry.task("lh-writer-005")
def action_items(files: TaskFiles) -> None:
    rng = random.Random(205)
    filler = [
        "The team reviewed progress since the last meeting.",
        "Attendance: Omar, Lena, Farah, Ben.",
        "Discussion moved to the offsite planning.",
        "Budget pressure was noted for Q4.",
        "Hiring remains the top concern.",
    ]
    paras: list = [("Title", "Operations Meeting - 6 September 2024")]
    for i, (owner, task, due) in enumerate(ACTIONS):
        paras += [filler[i], f"ACTION: {owner} to {task} by {due}."]
        if rng.random() < 0.5:
            paras.append("No further comments on this item.")
    write_docx(files.fixture("minutes.docx"), paras)
    ordered = sorted(ACTIONS, key=lambda a: (a[2], a[0]))
    write_docx(
        files.gold("action_items.docx"),
        [("Heading 1", "Action Items")]
        + [f"{due} - {owner}: {task}" for owner, task, due in ordered]
        + [f"Total: {len(ordered)} items"],
    )


PEOPLE = [
    ("Ines Duarte", "ines.duarte@example.com", "+1 415 555 0134"),
    ("Karl Wendt", "k.wendt@example.net", "+1 212 555 0198"),
    ("Sofia Rossi", "sofia@rossi.example.org", "+1 617 555 0110"),
]


def hr_paragraphs(redact: bool) -> list:
    email = (lambda p: "[REDACTED EMAIL]") if redact else (lambda p: p[1])
    phone = (lambda p: "[REDACTED PHONE]") if redact else (lambda p: p[2])
    paras: list = [
        ("Title", "Incident Review: Badge Access"),
        "This review covers badge access failures reported in August.",
    ]
    for person in PEOPLE:
        paras.append(
            f"{person[0]} reported the issue; reach them at {email(person)} or {phone(person)}."
        )
    if not redact:
        paras.append("CONFIDENTIAL NOTE: the vendor contract expires in October; do not share.")
    paras += [
        ("Heading 1", "Outcome"),
        f"Escalations go to {email(PEOPLE[1])}; the fix shipped on 2 September.",
    ]
    return paras


@registry.task("lh-writer-006")
def redaction(files: TaskFiles) -> None:
    write_docx(files.fixture("incident_review.docx"), hr_paragraphs(False))
    shutil.copy(
        files.fixtures / "incident_review.docx", files.gold("incident_review_original.docx")
    )
    write_docx(files.gold("incident_review_redacted.docx"), hr_paragraphs(True))
