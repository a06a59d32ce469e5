"""The editor's text rules: how a view numbers and clips lines, and tab-tolerant matching.

Views follow Anthropic's reference editor (the computer-use demo's edit tool): a file's lines are
the pieces between newlines, so a file that ends with a newline shows an empty last line and an
empty file shows line 1 empty; tabs are expanded to spaces; CRLF line ends show as plain lines;
16,000 characters of file text are shown, then the reference's clipping note. `str_replace` falls
back to comparing with tabs expanded, as the reference does, but rewrites only the matched text,
so the rest of the file keeps its own tabs (see docs/editor.md).
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from dataclasses import dataclass

MAX_VIEW_CHARS = 16000
TRUNCATED_NOTE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. "
    "You should retry this tool after you have searched inside the file with `grep -n` in order "
    "to find the line numbers of what you are looking for.</NOTE>"
)
TAB_SIZE = 8
# Above this many lines of matched plus new text, the edit is written as one block (no diff).
MAX_DIFF_LINES = 20_000
TAB_INDENTED = re.compile(r"(?:^|\n)[ ]*\t")


def numbered_view(content: str, descriptor: str, first_number: int = 1) -> str:
    """`content` as `cat -n` shows it: clipped after 16,000 characters, tabs expanded, numbered.

    Lines are the pieces between newlines (CRLF counts as a newline), so text that ends with a
    newline shows an empty last line and empty text shows line 1 empty.
    """
    content = content.replace("\r\n", "\n")
    if len(content) > MAX_VIEW_CHARS:
        content = content[:MAX_VIEW_CHARS] + TRUNCATED_NOTE
    lines = content.expandtabs(TAB_SIZE).split("\n")
    body = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start=first_number))
    return f"Here's the result of running `cat -n` on {descriptor}:\n{body}\n"


@dataclass(frozen=True)
class Expansion:
    """A string and where each of its characters starts once tabs are expanded."""

    source: str
    starts: tuple[int, ...]  # starts[i] = column offset of source[i]; starts[-1] = total width

    @classmethod
    def of(cls, text: str) -> Expansion:
        starts, width, column = [0], 0, 0
        for char in text:
            if char == "\t":
                step = TAB_SIZE - column % TAB_SIZE
                column += step
            else:
                step = 1
                column = 0 if char in "\n\r" else column + 1
            width += step
            starts.append(width)
        return cls(text, tuple(starts))

    def project(self, begin: int, end: int) -> str:
        """The source text behind expanded span [begin, end): whole characters as they are, the
        covered part of a partly covered tab as spaces."""
        parts = []
        index = max(bisect_right(self.starts, begin) - 1, 0)
        while index < len(self.source) and self.starts[index] < end:
            low, high = self.starts[index], self.starts[index + 1]
            if low >= begin and high <= end:
                parts.append(self.source[index])
            else:
                parts.append(" " * (min(high, end) - max(low, begin)))
            index += 1
        return "".join(parts)


def occurrence_lines(text: str, needle: str) -> list[int]:
    """The line numbers where (non-overlapping) occurrences of `needle` start."""
    lines, position = [], text.find(needle)
    while position != -1 and needle:
        lines.append(text.count("\n", 0, position) + 1)
        position = text.find(needle, position + len(needle))
    return lines


@dataclass(frozen=True)
class TabMatch:
    """Where old_str matched once the tabs of both were expanded."""

    count: int
    lines: list[int]
    new_text: str = ""
    start: int = 0  # index in the new text where the replacement begins


def replace_tabs_as_spaces(text: str, old: str, new: str) -> TabMatch:
    """Replace the single match of `old` in `text` comparing both with tabs expanded.

    Only the matched span changes; inside it, text that the edit leaves equal keeps the file's
    own characters (tabs stay tabs), and when the span is indented with tabs the new lines'
    indentation is written with tabs too.
    """
    wide_text, wide_old = text.expandtabs(TAB_SIZE), old.expandtabs(TAB_SIZE)
    count = wide_text.count(wide_old) if wide_old else 0
    if count != 1:
        return TabMatch(count, occurrence_lines(wide_text, wide_old))
    position = wide_text.find(wide_old)
    end = position + len(wide_old)
    # Tabs expand line by line, so only the lines holding the match need a column map.
    wide_start = wide_text.rfind("\n", 0, position) + 1
    line = wide_text.count("\n", 0, wide_start)
    offset, block = _lines_at(text, line, wide_text.count("\n", wide_start, end) + 1)
    expanded = Expansion.of(block)
    position, end = position - wide_start, end - wide_start
    first = bisect_right(expanded.starts, position) - 1
    last = first
    while expanded.starts[last] < end:
        last += 1
    wide_block = block.expandtabs(TAB_SIZE)
    lead = wide_block[expanded.starts[first] : position]
    trail = wide_block[end : expanded.starts[last]]
    base = expanded.starts[first]
    region = Expansion(
        block[first:last], tuple(s - base for s in expanded.starts[first : last + 1])
    )
    line_start = block.rfind("\n", 0, first) + 1
    if TAB_INDENTED.search(block[line_start:last]):
        new = indent_with_tabs(new, keep_first=bool(lead) or first != line_start)
    replacement = _merge(region, lead, Expansion.of(new), trail)
    first, last = first + offset, last + offset
    return TabMatch(1, [], text[:first] + replacement + text[last:], first)


def _lines_at(text: str, line: int, count: int) -> tuple[int, str]:
    """Where line `line` (0-based) of `text` starts, and the text of it and the next count-1."""
    lines = text.split("\n")
    block = "\n".join(lines[line : line + count])
    return sum(map(len, lines[:line])) + line, block


def indent_with_tabs(new: str, keep_first: bool) -> str:
    """`new` with each line's leading spaces written as tabs (8 columns each), as the file does."""
    lines = new.split("\n")
    for index, line in enumerate(lines):
        if index == 0 and keep_first:
            continue
        stripped = line.lstrip(" \t")
        width = len(line[: len(line) - len(stripped)].expandtabs(TAB_SIZE))
        if width >= TAB_SIZE and stripped:
            lines[index] = "\t" * (width // TAB_SIZE) + " " * (width % TAB_SIZE) + stripped
    return "\n".join(lines)


def _merge(region: Expansion, lead: str, new: Expansion, trail: str) -> str:
    """The text replacing `region`: its expanded form becomes lead + new + trail, and every
    stretch the edit leaves unchanged keeps the region's own characters.

    Lines are aligned first (a line-level diff), then each changed line keeps the common start
    and end it shares with the line it replaces: linear in the text for the usual edits.
    """
    wide_region = _wide(region)
    wide_new = lead + _wide(new) + trail
    replacement = Expansion(
        " " * len(lead) + new.source + " " * len(trail),
        tuple(range(len(lead)))
        + tuple(len(lead) + s for s in new.starts)
        + tuple(len(lead) + new.starts[-1] + i + 1 for i in range(len(trail))),
    )
    old_lines, new_lines = wide_region.splitlines(True), wide_new.splitlines(True)
    if len(old_lines) + len(new_lines) > MAX_DIFF_LINES:
        return replacement.source
    old_at, new_at = _offsets(old_lines), _offsets(new_lines)

    def keep(old_span: tuple[int, int], new_span: tuple[int, int]) -> str:
        return _keep_ends(region, wide_region, old_span, replacement, wide_new, new_span)

    parts = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(region.project(old_at[i1], old_at[i2]))
        elif tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                old_span, new_span = (old_at[i], old_at[i + 1]), (new_at[j], new_at[j + 1])
                parts.append(keep(old_span, new_span))
        elif tag != "delete":
            parts.append(keep((old_at[i1], old_at[i2]), (new_at[j1], new_at[j2])))
    return "".join(parts)


def _offsets(lines: list[str]) -> list[int]:
    """Where each line starts, and the end of the last one."""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def _keep_ends(
    region: Expansion,
    wide_region: str,
    old_span: tuple[int, int],
    new: Expansion,
    wide_new: str,
    new_span: tuple[int, int],
) -> str:
    """Region span `old_span` rewritten as `new_span` of the new text, keeping the region's own
    characters where the two share a start or an end."""
    (a, b), (c, d) = old_span, new_span
    limit = min(b - a, d - c)
    head = 0
    while head < limit and wide_region[a + head] == wide_new[c + head]:
        head += 1
    tail = 0
    while tail < limit - head and wide_region[b - 1 - tail] == wide_new[d - 1 - tail]:
        tail += 1
    return (
        region.project(a, a + head) + new.project(c + head, d - tail) + region.project(b - tail, b)
    )


def _wide(expansion: Expansion) -> str:
    """The expanded text of `expansion` (tabs as the spaces its starts give them)."""
    return "".join(
        " " * (expansion.starts[i + 1] - expansion.starts[i]) if char == "\t" else char
        for i, char in enumerate(expansion.source)
    )
