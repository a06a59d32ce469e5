"""Fixtures and gold decks of the Impress tasks (lh-impress-*)."""

from __future__ import annotations

import random

from pptx import Presentation
from pptx.util import Pt

from tasks.suites.longhorizon.common import BuilderRegistry, TaskFiles, write_csv

registry = BuilderRegistry()
build_all = registry.build_all


def add_slide(
    prs, layout: int, title: str, bullets: list[str] | None = None, notes: str | None = None
):
    slide = prs.slides.add_slide(prs.slide_layouts[layout])
    slide.shapes.title.text = title
    if bullets is not None:
        slide.placeholders[1].text_frame.text = "\n".join(bullets)
    if notes:
        slide.notes_slide.notes_text_frame.text = notes
    return slide


OUTLINE = {
    "Goals": [
        "Ship v1 to pilot customers by Q4",
        "Cut onboarding time in half",
        "Keep cloud cost flat",
    ],
    "Team": ["Product: Dana", "Engineering: Ravi and Yuki", "Design: Ella"],
    "Timeline": ["Sep: discovery", "Oct-Nov: build", "Dec: pilot"],
    "Risks": ["Vendor API limits", "Hiring delays"],
}


@registry.task("lh-impress-001")
def outline_deck(files: TaskFiles) -> None:
    lines = ["# Project Falcon Kickoff"]
    for section, bullets in OUTLINE.items():
        lines += ["", f"## {section}", *[f"- {b}" for b in bullets]]
    files.fixture("falcon_outline.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = "Project Falcon Kickoff"
    slide.placeholders[1].text = "Kickoff meeting, 2 September 2024"
    for section, bullets in OUTLINE.items():
        add_slide(prs, 1, section, bullets, notes=f"{len(bullets)} points")
    add_slide(prs, 5, "Questions?")
    prs.save(files.gold("falcon.pptx"))


def review_deck(
    quarter: str, rows: list[list], total: str, notes: str | None, legacy: bool
) -> Presentation:
    prs = Presentation()
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = f"{quarter} Business Review"
    title.placeholders[1].text = "Sales and Operations"
    if notes:
        title.notes_slide.notes_text_frame.text = notes
    best = max(rows, key=lambda r: float(r[1].replace(",", "")))
    add_slide(prs, 1, "Highlights", [f"Total revenue: {total}", f"Best region: {best[0]}"])
    slide = add_slide(prs, 5, "Revenue by region")
    table = slide.shapes.add_table(len(rows) + 1, 3, Pt(40), Pt(120), Pt(600), Pt(200)).table
    for c, head in enumerate(["Region", "Revenue", "Growth"]):
        table.cell(0, c).text = head
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    add_slide(prs, 1, "Risks", ["Supplier delays", "FX exposure"])
    if legacy:
        add_slide(prs, 1, "Appendix: legacy metrics", ["Old NPS method", "Retired KPIs"])
    return prs


@registry.task("lh-impress-002")
def update_review(files: TaskFiles) -> None:
    q2 = [
        ["North", "410,200", "3.1%"],
        ["South", "388,900", "-1.2%"],
        ["East", "502,750", "4.4%"],
        ["West", "297,300", "0.8%"],
    ]
    review_deck("Q2", q2, "$1,599,150", None, True).save(files.fixture("quarterly_review.pptx"))
    rng = random.Random(302)
    q3 = [
        [region, rng.randint(280_000, 560_000), round(rng.uniform(-4, 8), 1)] for region, *_ in q2
    ]
    write_csv(files.fixture("q3_numbers.csv"), [["Region", "Revenue", "GrowthPct"], *q3])
    rows = [[r, f"{v:,}", f"{g:.1f}%"] for r, v, g in q3]
    total = f"${sum(v for _, v, _ in q3):,}"
    review_deck("Q3", rows, total, "Presenter: Dana Whitfield", False).save(
        files.gold("quarterly_review.pptx")
    )


AGENDA_PARTS = ["1. Background", "2. Method", "3. Results", "4. Next steps"]


@registry.task("lh-impress-003")
def agenda_deck(files: TaskFiles) -> None:
    def deck(order: list[str], agenda: list[str], draft: bool) -> Presentation:
        prs = Presentation()
        slide = prs.slides.add_slide(prs.slide_layouts[0])
        slide.shapes.title.text = "Pilot Study Readout"
        slide.placeholders[1].text = "Research team"
        add_slide(prs, 1, "Agenda", agenda)
        for part in order:
            add_slide(prs, 1, part, [f"Details for {part[3:].lower()}"])
            if draft and part.startswith("3"):
                add_slide(prs, 1, "DRAFT - do not show", ["Unreviewed numbers"])
        return prs

    shuffled = ["3. Results", "1. Background", "4. Next steps", "2. Method"]
    deck(shuffled, ["(to be written)"], True).save(files.fixture("readout.pptx"))
    deck(AGENDA_PARTS, AGENDA_PARTS, False).save(files.gold("readout.pptx"))


def styled_deck(uniform: bool) -> Presentation:
    rng = random.Random(304)
    prs = Presentation()
    for n in range(1, 5):
        slide = add_slide(prs, 1, f"Topic {n}", [f"Point {n}.{k}" for k in range(1, 4)])
        for paragraph in slide.shapes.title.text_frame.paragraphs:
            for run in paragraph.runs:
                run.font.bold = True if uniform else None
        for paragraph in slide.placeholders[1].text_frame.paragraphs:
            for run in paragraph.runs:
                run.font.name = (
                    "DejaVu Sans" if uniform else rng.choice(["Arial", "Courier New", "Georgia"])
                )
                run.font.size = Pt(18) if uniform else Pt(rng.choice([12, 20, 28]))
    return prs


@registry.task("lh-impress-004")
def uniform_fonts(files: TaskFiles) -> None:
    styled_deck(False).save(files.fixture("styles.pptx"))
    styled_deck(True).save(files.gold("styles.pptx"))


SCRIPT = {
    1: "Welcome everyone and introduce the agenda.",
    2: "Revenue grew 12 percent year over year.",
    3: "Churn fell to 2.1 percent after the onboarding change.",
    4: "We ask for two more engineers.",
}


@registry.task("lh-impress-005")
def speaker_notes(files: TaskFiles) -> None:
    titles = ["Annual Update", "Growth", "Retention", "Ask"]

    def deck(with_notes: bool) -> Presentation:
        prs = Presentation()
        for n, title in enumerate(titles, start=1):
            add_slide(
                prs,
                1 if n > 1 else 5,
                title,
                [f"See notes for slide {n}"] if n > 1 else None,
                notes=SCRIPT[n] if with_notes else None,
            )
        if with_notes:
            add_slide(
                prs,
                1,
                "Key numbers",
                ["12 percent revenue growth", "2.1 percent churn", "2 engineers"],
            )
        return prs

    deck(False).save(files.fixture("annual_update.pptx"))
    script = "\n".join(f"Slide {n}: {text}" for n, text in SCRIPT.items())
    files.fixture("talk_script.txt").write_text(script + "\n", encoding="utf-8")
    deck(True).save(files.gold("annual_update.pptx"))
