"""compare_table's pivot_table rule on workbooks whose pivot parts openpyxl writes from its
classes."""

from __future__ import annotations

import openpyxl
import pytest
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
    Location,
    PageField,
    PivotField,
    RowColField,
    TableDefinition,
)

from tasks.metrics.table import RULES, compare_table

HEADER = ("Region", "Product", "Channel", "Revenue")
RULE = {
    "type": "pivot_table",
    "sheet_idx0": "RNSheet2",
    "sheet_idx1": "ENSheet2",
    "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"],
}


def pivot(rows, cols=(), page=(), data=((3, "sum"),), field_order=HEADER, name="PivotTable1"):
    """A pivot over Sheet1!A1:D4; field arguments are indexes into `field_order`."""
    cache = CacheDefinition(
        cacheSource=CacheSource(
            type="worksheet", worksheetSource=WorksheetSource(ref="A1:D4", sheet="Sheet1")
        ),
        cacheFields=[CacheField(name=n, sharedItems=SharedItems()) for n in field_order],
    )
    cache.records = RecordList()
    table = TableDefinition(
        name=name,
        cacheId=1,
        dataCaption="Values",
        location=Location(ref="A3:C8", firstHeaderRow=1, firstDataRow=1, firstDataCol=1),
        pivotFields=[PivotField(showAll=False) for _ in field_order],
        rowFields=[RowColField(x=i) for i in rows],
        colFields=[RowColField(x=i) for i in cols],
        pageFields=[PageField(fld=i) for i in page],
        dataFields=[DataField(name=f"f{i}", fld=i, subtotal=fn) for i, fn in data],
    )
    table.cache = cache
    return table


def workbook(tmp_path, name, *pivots) -> str:
    book = openpyxl.Workbook()
    data = book.active
    data.title = "Sheet1"
    for row in (HEADER, ("N", "a", "web", 1), ("S", "b", "shop", 2), ("N", "b", "web", 3)):
        data.append(row)
    summary = book.create_sheet("Sheet2")
    for table in pivots:
        summary.add_pivot(table)
    path = tmp_path / name
    book.save(path)
    return str(path)


def test_pivot_table_is_a_compare_table_rule():
    assert "pivot_table" in RULES


def test_same_pivot_scores_one(tmp_path):
    gold = workbook(tmp_path, "gold.xlsx", pivot(rows=[1], cols=[2], page=[0]))
    same = workbook(tmp_path, "same.xlsx", pivot(rows=[1], cols=[2], page=[0]))
    assert compare_table(same, gold, rules=[RULE]) == 1.0


@pytest.mark.parametrize(
    "wrong",
    [
        pivot(rows=[0], cols=[2], page=[0]),  # another row field
        pivot(rows=[1], cols=[], page=[0]),  # column field missing
        pivot(rows=[1], cols=[2], page=[]),  # filter missing
        pivot(rows=[1], cols=[2], page=[0], data=[(3, "count")]),  # count instead of sum
    ],
)
def test_a_different_pivot_scores_zero(tmp_path, wrong):
    gold = workbook(tmp_path, "gold.xlsx", pivot(rows=[1], cols=[2], page=[0]))
    assert compare_table(workbook(tmp_path, "wrong.xlsx", wrong), gold, rules=[RULE]) == 0.0


def test_no_pivot_in_the_result_scores_zero(tmp_path):
    gold = workbook(tmp_path, "gold.xlsx", pivot(rows=[1]))
    assert compare_table(workbook(tmp_path, "none.xlsx"), gold, rules=[RULE]) == 0.0
