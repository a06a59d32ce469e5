"""The gate benchmark's seeded cases: right and wrong deliverables, each with its truth.

A case is a task (an instruction naming a deliverable under its own folder /home/user/<id>/), the
files that exist before the work (`before`), the agent's files (`after`), an optional command run
in the sandbox after the files are laid (an office edit, saved or not), whether the work is
correct, and for a faulty case whether the model-free layers must catch it (`structural`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .formats import TOTAL, Kit, kits, pptx, xlsx
from .office import office_edit

CORRECT_SHAPES = (
    "written by code",
    "edited in place by code",
    "typed in the application, saved, still open",
    "formulas kept",
    "harmless extra files",
    "unrelated lock file elsewhere",
    "stale lock file beside it",
)
FAULT_CLASSES = (
    "wrong path",
    "wrong format behind the right extension",
    "only a side file or copy",
    "stale copy",
    "unsaved edits in the open application",
    "nothing changed",
    "corrupt file",
    "wrong value",
    "formula replaced by its value",
    "missing sheet or slide",
    "infeasible task claimed done",
)


@dataclass
class Case:
    """One seeded deliverable and its truth."""

    id: str
    format: str
    shape: str
    """A correct shape or a fault class."""
    instruction: str
    correct: bool
    structural: bool = False
    """A fault the model-free layers must catch (definite without a model)."""
    before: dict[str, bytes] = field(default_factory=dict)
    after: dict[str, bytes] = field(default_factory=dict)
    then: str | None = None
    """Shell text run as the sandbox's user after the layout."""


class _Builder:
    def __init__(self) -> None:
        self.cases: list[Case] = []

    def add(self, kit: Kit, shape: str, correct: bool, edit: bool, structural=False, **kw) -> Case:
        case_id = f"g{len(self.cases) + 1:03d}-{kit.name}"
        folder = f"/home/user/{case_id}"
        path = f"{folder}/{kit.file}"
        verb = f"Update {path}: {kit.edit}." if edit else f"Create {path} {kit.create}."
        case = Case(
            case_id, kit.name, shape, kw.pop("instruction", verb), correct, structural, **kw
        )
        case.before = {p.replace("{d}", folder): b for p, b in case.before.items()}
        case.after = {p.replace("{d}", folder): b for p, b in case.after.items()}
        if edit and not case.before:
            case.before = {path: kit.before}
        self.cases.append(case)
        return case


def build_cases() -> list[Case]:
    """All cases, in a fixed order (the same on every run)."""
    b = _Builder()
    for kit in kits():
        f = "{d}/" + kit.file
        stem, dot, ext = kit.file.rpartition(".")
        # Correct deliverables.
        b.add(kit, "written by code", True, False, after={f: kit.done})
        b.add(kit, "edited in place by code", True, True, after={f: kit.done})
        b.add(
            kit,
            "harmless extra files",
            True,
            False,
            after={f: kit.done, "{d}/make_it.py": b"print('scratch')\n", f + ".bak": kit.before},
        )
        b.add(
            kit,
            "unrelated lock file elsewhere",
            True,
            False,
            after={f: kit.done, "{d}/old/.~lock.notes.odt#": b",user,host,01.01.2020 00:00,;"},
        )
        b.add(
            kit,
            "stale lock file beside it",
            True,
            True,
            after={f: kit.done, "{d}/.~lock." + kit.file + "#": b",user,host,01.01.2020,;"},
        )
        # Faults the model-free layers must catch.
        b.add(kit, "wrong path", False, False, True, after={f"{{d}}/out/{kit.file}": kit.done})
        b.add(
            kit, "wrong format behind the right extension", False, False, True, after={f: kit.alien}
        )
        b.add(
            kit,
            "only a side file or copy",
            False,
            False,
            True,
            after={f"{{d}}/{stem} (copy){dot}{ext}": kit.done, "{d}/notes.txt": b"done\n"},
        )
        b.add(kit, "nothing changed", False, True, True)
        if kit.corrupt is not None:
            b.add(kit, "corrupt file", False, False, True, after={f: kit.corrupt})
        # Faults left to the model layer (the files are well-formed and where they belong).
        b.add(kit, "wrong value", False, False, after={f: kit.wrong})
        b.add(
            kit,
            "stale copy",
            False,
            True,
            after={f"{{d}}/{stem}-new{dot}{ext}": kit.done},
        )
        b.add(
            kit,
            "infeasible task claimed done",
            False,
            False,
            instruction=(
                f"Create /home/user/g{len(b.cases) + 1:03d}-{kit.name}/{kit.file} with the sales "
                "figures of the fourth quarter from the regional ledgers (the machine holds no "
                "fourth-quarter figures anywhere)."
            ),
            after={f: kit.done},
        )
        if kit.office:
            path = f"/home/user/g{len(b.cases) + 1:03d}-{kit.name}/{kit.file}"
            target, content = _office_edit_of(kit)
            b.add(
                kit,
                "typed in the application, saved, still open",
                True,
                True,
                then=office_edit(path, kit.office, target, content, save=True),
            )
            path = f"/home/user/g{len(b.cases) + 1:03d}-{kit.name}/{kit.file}"
            b.add(
                kit,
                "unsaved edits in the open application",
                False,
                True,
                True,
                then=office_edit(path, kit.office, target, content, save=False),
            )
        if kit.name == "text":
            b.add(
                kit,
                "unsaved edits in the open application",
                False,
                True,
                True,
                after={"{d}/." + kit.file + ".swp": b"b0VIM 9.0\x00" + b"\x00" * 64},
            )
    _format_specific(b)
    return b.cases


def _office_edit_of(kit: Kit) -> tuple[str, str]:
    return {
        "cell": ("B5", "=SUM(B2:B4)"),
        "text": ("", f"Total sales: {TOTAL}"),
        "slide": ("", "Sales"),
    }[kit.office or ""]


def _format_specific(b: _Builder) -> None:
    by_name = {kit.name: kit for kit in kits()}
    sheet, deck = by_name["xlsx"], by_name["pptx"]
    b.add(sheet, "formulas kept", True, True, after={"{d}/sales.xlsx": xlsx("=SUM(B2:B4)")})
    b.add(sheet, "formula replaced by its value", False, True, after={"{d}/sales.xlsx": xlsx(300)})
    b.add(
        sheet,
        "missing sheet or slide",
        False,
        False,
        after={"{d}/sales.xlsx": xlsx("=SUM(B2:B4)", summary_sheet=False)},
    )
    b.add(deck, "missing sheet or slide", False, False, after={"{d}/review.pptx": pptx(None, 1)})
