"""Cases for the pivot_table rule and shared-string workbooks (as LibreOffice writes them)."""

from __future__ import annotations

import re
import zipfile
from typing import Any

from openpyxl.pivot.cache import (
    CacheDefinition,
    CacheField,
    CacheSource,
    SharedItems,
    WorksheetSource,
)
from openpyxl.pivot.record import RecordList
from openpyxl.pivot.table import (
    DataField,
    FieldItem,
    Location,
    PageField,
    PivotField,
    RowColField,
    TableDefinition,
)

from tests.osworld_cases.sheet_gen_cells import ROWS, m
from tests.osworld_cases.sheet_gen_common import FIXED_TIME, CaseSet, book, rewrite_zip
from tests.osworld_cases.sheet_gen_data import BASE, with_rows

HEADER = ("Region", "Product", "Channel", "Revenue")
DATA = [HEADER, ("N", "a", "web", 1), ("S", "b", "shop", 2), ("N", "b", "web", 3)]
PROPS = ["col_fields", "filter", "row_fields", "data_fields"]


def pivot(
    rows=(1,), cols=(), page=(), data=((3, "sum"),), ref="A1:D4", items=None, name="Pivot1"
) -> TableDefinition:
    """A pivot over Sheet1!`ref`; `items` maps a field index to its item count."""
    items = items if items is not None else {i: 2 for i in (*rows, *cols, *page)}
    cache = CacheDefinition(
        cacheSource=CacheSource(
            type="worksheet", worksheetSource=WorksheetSource(ref=ref, sheet="Sheet1")
        ),
        cacheFields=[CacheField(name=n, sharedItems=SharedItems()) for n in HEADER],
    )
    cache.records = RecordList()
    table = TableDefinition(
        name=name,
        cacheId=1,
        dataCaption="Values",
        location=Location(ref="A3:C8", firstHeaderRow=1, firstDataRow=1, firstDataCol=1),
        pivotFields=[
            PivotField(showAll=False, items=[FieldItem(x=j) for j in range(items.get(i, 0))])
            for i in range(len(HEADER))
        ],
        rowFields=[RowColField(x=i) for i in rows],
        colFields=[RowColField(x=i) for i in cols],
        pageFields=[PageField(fld=i) for i in page],
        dataFields=[DataField(name=f"f{i}", fld=i, subtotal=fn) for i, fn in data],
    )
    table.cache = cache
    return table


def pivot_book(path, *tables: TableDefinition) -> None:
    def tweak(wb) -> None:
        for table in tables:
            wb["Sheet2"].add_pivot(table)

    book(path, {"Sheet1": [list(r) for r in DATA], "Sheet2": []}, tweak)


def pivot_cases(cases: CaseSet) -> None:
    def case(cid: str, result: list, expected: list, props: list[str] = PROPS) -> None:
        folder = cases.folder(cid)
        pivot_book(folder / "result.xlsx", *result)
        pivot_book(folder / "expected.xlsx", *expected)
        rule = {
            "type": "pivot_table",
            "sheet_idx0": "RNSheet2",
            "sheet_idx1": "ENSheet2",
            "pivot_props": props,
        }
        cases.add(cid, "compare_table", "result.xlsx", "expected.xlsx", {"rules": [rule]})

    case("pivot-same", [pivot()], [pivot()])
    case("pivot-row-field-differs", [pivot(rows=(2,))], [pivot()])
    case("pivot-col-vs-row", [pivot(rows=(), cols=(1,))], [pivot()])
    case("pivot-filter-field", [pivot(page=(0,))], [pivot()])
    case("pivot-subtotal", [pivot(data=((3, "average"),))], [pivot()])
    case("pivot-data-name-ignored", [pivot()], [pivot()], [*PROPS])
    case("pivot-name-prop", [pivot(name="P2")], [pivot()], ["name"])
    case("pivot-name-not-listed", [pivot(name="P2")], [pivot()])
    case("pivot-source-differs", [pivot(ref="A1:D3")], [pivot()])
    case(
        "pivot-source-sheet-left-bias",
        [pivot(rows=(2,), items={1: 2, 2: 2})],
        [pivot(rows=(2,), items={2: 2})],
    )
    case("pivot-no-props", [pivot(rows=(2,))], [pivot()], [])
    case("pivot-missing", [], [pivot()])
    case("pivot-none", [], [])
    case("pivot-two-any-order", [pivot(ref="A1:C4"), pivot()], [pivot(), pivot(ref="A1:C4")])
    case("pivot-selection-items", [pivot(items={1: 3})], [pivot(items={1: 2})], ["selection"])
    case("pivot-show-headers", [pivot()], [pivot()], ["show_headers", "location"])


SST = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
INLINE = re.compile(
    rb'<c r="([A-Z]+\d+)"((?: s="\d+")?) t="inlineStr"><is>(<t[^>]*>.*?</t>|<t/>)</is>',
    re.S,
)


def to_shared_strings(path) -> None:
    """Store the workbook's inline strings as shared strings (what LibreOffice and Excel write)."""
    strings: list[bytes] = []

    def share(match: re.Match) -> bytes:
        strings.append(match.group(3))
        index = len(strings) - 1
        return b'<c r="%s"%s t="s"><v>%d</v>' % (match.group(1), match.group(2), index)

    def edit(name: str, data: bytes) -> bytes:
        if name.startswith("xl/worksheets/sheet"):
            return re.sub(rb"(</c>)", rb"\1", INLINE.sub(share, data)).replace(
                b"</is></c>", b"</c>"
            )
        if name == "[Content_Types].xml":
            return data.replace(
                b"</Types>",
                b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
            )
        if name == "xl/_rels/workbook.xml.rels":
            return data.replace(
                b"</Relationships>",
                b'<Relationship Id="rIdSST" Type="http://schemas.openxmlformats.org/'
                b'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
                b"</Relationships>",
            )
        return data

    rewrite_zip(path, edit)

    body = b"".join(b"<si>%s</si>" % s for s in strings)
    table = b'<sst xmlns="%s" count="%d" uniqueCount="%d">%s</sst>' % (
        SST.encode(),
        len(strings),
        len(strings),
        body,
    )
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(zipfile.ZipInfo("xl/sharedStrings.xml", FIXED_TIME), table)


def shared_string_cases(cases: CaseSet) -> None:
    def pair(cid: str, result: Any, expected: Any, rules: list[dict]) -> None:
        folder = cases.folder(cid)
        book(folder / "result.xlsx", result)
        to_shared_strings(folder / "result.xlsx")
        if expected is not None:
            book(folder / "expected.xlsx", expected)
            to_shared_strings(folder / "expected.xlsx")
        cases.add(
            cid,
            "compare_table",
            "result.xlsx",
            "expected.xlsx" if expected else None,
            {"rules": rules},
        )

    data = [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
    pair("sst-data-equal", BASE, BASE, data)
    pair("sst-data-differs", BASE, with_rows(BASE, r1c0="Apple"), data)
    pair("sst-data-trailing-space", BASE, with_rows(BASE, r1c0="apple "), data)

    def cell(cid: str, coordinate: str, check: dict) -> None:
        rule = {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": coordinate,
            "props": {"value": check},
        }
        pair(cid, ROWS, None, [rule])

    cell("sst-cell-eq", "D2", m("eq", "Hello World"))
    cell("sst-cell-padded-exact", "A3", m("eq", "  padded  "))
    cell("sst-cell-padded-stripped", "A3", m("eq", "padded"))
    cell("sst-cell-empty-string", "G3", m("eq", ""))
    cell("sst-cell-re-ignorecase", "D2", m("re.IGNORECASE", "^hello world$"))
    cell("sst-cell-multiline", "D3", m("re.M", "^world"))
    exact = {"range": ["A1:B3"], "type": "exact_match"}
    rows = [["Road", "Addr"], ["12 Main Rd", 5], ["+ 33 Elm St ", 2.5]]
    fuzzy = [{"type": "sheet_fuzzy", "sheet_idx0": 0, "sheet_idx1": "EI0", "rules": [exact]}]
    pair("sst-fuzzy-equal", rows, rows, fuzzy)
    pair("sst-fuzzy-trailing-space", rows, with_rows(rows, r2c0="+ 33 Elm St"), fuzzy)
    trim = [{**fuzzy[0], "rules": [{**exact, "range": ["A3"], "trim_leadings": "+ "}]}]
    pair("sst-fuzzy-trim-leadings", rows, with_rows(rows, r2c0="33 Elm St "), trim)
