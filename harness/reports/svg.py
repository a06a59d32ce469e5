"""Small inline SVG charts (bars, scatter, histogram, 2×2 matrix) for the static report pages.

Pure functions from numbers and labels to an <svg> string; labels are escaped with `page.esc`, sizes
are fixed so a page with 400 tasks stays the same size on screen.
"""

from __future__ import annotations

import math

from .page import esc

WIDTH, HEIGHT = 460, 260
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 120, 20, 16, 40
BAR_COLOR, POINT_COLOR, FAIL_COLOR = "#4a7ab5", "#2b8a3e", "#c0392b"
FONT = 'font-family="system-ui,sans-serif" font-size="11"'


def _svg(body: str, label: str, width: int = WIDTH, height: int = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(label)}" {FONT}>'
        f"<title>{esc(label)}</title>{body}</svg>"
    )


def _nice_max(value: float) -> float:
    """The axis end: the value rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _tick(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


TICKS = 5
GRID_COLOR = "#e3e3e3"


def ticks(end: float, count: int = TICKS) -> list[float]:
    """Evenly spaced tick values from 0 to `end` (a `_nice_max`, so the steps are round)."""
    return [end * i / count for i in range(count + 1)]


def _x_ticks(left: float, span: float, y: float, end: float, top: float | None, unit="") -> str:
    """Tick marks and labels along a horizontal axis at height `y`; grid lines up to `top`."""
    parts = []
    for value in ticks(end):
        x = left + (value / end) * span if end else left
        if top is not None and value:
            parts.append(
                f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{y}" stroke="{GRID_COLOR}"/>'
            )
        parts.append(
            f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#888"/>'
            f'<text x="{x:.1f}" y="{y + 15}" text-anchor="middle">{_tick(value)}{esc(unit)}</text>'
        )
    return "".join(parts)


def _y_ticks(left: float, right: float, bottom: float, span: float, end: float) -> str:
    parts = []
    for value in ticks(end):
        y = bottom - (value / end) * span if end else bottom
        if value:
            parts.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID_COLOR}"/>'
            )
        parts.append(
            f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#888"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick(value)}</text>'
        )
    return "".join(parts)


def hbar_chart(
    items: list[tuple[str, float]], label: str, top: float | None = None, suffix: str = ""
) -> str:
    """Horizontal bars, one per (name, value), with the value written at the bar's end."""
    if not items:
        return _svg('<text x="10" y="20">no data</text>', label, height=40)
    bar_h, gap = 18, 6
    height = MARGIN_TOP + len(items) * (bar_h + gap) + MARGIN_BOTTOM
    end = top or _nice_max(max(v for _, v in items))
    span = WIDTH - MARGIN_LEFT - MARGIN_RIGHT - 40
    parts = []
    for i, (name, value) in enumerate(items):
        y = MARGIN_TOP + i * (bar_h + gap)
        w = max(0.0, value / end * span) if end else 0.0
        short = name if len(name) <= 18 else name[:17] + "…"
        parts.append(
            f'<text x="{MARGIN_LEFT - 6}" y="{y + 13}" text-anchor="end">{esc(short)}</text>'
            f'<rect x="{MARGIN_LEFT}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{BAR_COLOR}">'
            f"<title>{esc(name)}: {_tick(value)}{esc(suffix)}</title></rect>"
            f'<text x="{MARGIN_LEFT + w + 4:.1f}" y="{y + 13}">{_tick(value)}{esc(suffix)}</text>'
        )
    axis_y = height - MARGIN_BOTTOM + 4
    parts.append(
        f'<line x1="{MARGIN_LEFT}" y1="{axis_y}" x2="{MARGIN_LEFT + span}" y2="{axis_y}" '
        f'stroke="#888"/>' + _x_ticks(MARGIN_LEFT, span, axis_y, end, None)
    )
    return _svg("".join(parts), label, height=height)


def _axes(x_label: str, y_label: str, x_end: float, y_end: float) -> str:
    left, bottom = MARGIN_LEFT - 70, HEIGHT - MARGIN_BOTTOM
    right, top = WIDTH - MARGIN_RIGHT, MARGIN_TOP
    return (
        _x_ticks(left, right - left, bottom, x_end, top)
        + _y_ticks(left, right, bottom, bottom - top, y_end)
        + f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{bottom}" x2="{left}" y2="{top}" stroke="#888"/>'
        f'<text x="{(left + right) / 2}" y="{bottom + 32}" '
        f'text-anchor="middle">{esc(x_label)}</text>'
        f'<text x="12" y="{(top + bottom) / 2}" transform="rotate(-90 12 {(top + bottom) / 2})" '
        f'text-anchor="middle">{esc(y_label)}</text>'
    )


def scatter(
    points: list[tuple[str, float, float, bool]], x_label: str, y_label: str, label: str
) -> str:
    """One dot per (name, x, y, succeeded), failures in red; the y axis runs from 0 to 1
    (scores). Points that land on the same spot (within 3 px, same colour) are one larger dot
    with their count written beside it and every name in its title."""
    left, bottom = MARGIN_LEFT - 70, HEIGHT - MARGIN_BOTTOM
    span_x, span_y = WIDTH - MARGIN_RIGHT - left, bottom - MARGIN_TOP
    x_end = _nice_max(max((p[1] for p in points), default=0.0))
    spots: dict[tuple[int, int, bool], list[tuple[str, float, float, float, float]]] = {}
    for name, x, y, ok in points:
        cx = left + (x / x_end) * span_x
        cy = bottom - max(0.0, min(1.0, y)) * span_y
        spots.setdefault((round(cx / 3), round(cy / 3), ok), []).append((name, x, y, cx, cy))
    dots = []
    for (_, _, ok), members in spots.items():
        name, x, y, cx, cy = members[0]
        count = len(members)
        names = ", ".join(m[0] for m in members[:12]) + (
            f" and {count - 12} more" if count > 12 else ""
        )
        radius = 3.5 + min(6.0, math.sqrt(count - 1) * 1.5)
        color = POINT_COLOR if ok else FAIL_COLOR
        label_text = (
            f'<text x="{cx + radius + 2:.1f}" y="{cy + 4:.1f}" class="count">×{count}</text>'
            if count > 1
            else ""
        )
        title = f"{count} tasks: {names}" if count > 1 else names
        dots.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{color}" '
            f'fill-opacity="0.6"><title>{esc(title)}: {_tick(x)}, {_tick(y)}</title></circle>'
            + label_text
        )
    note = ""
    if points and not any(p[1] for p in points):  # every dot sits on the y axis
        note = f'<text x="{left + 8}" y="{MARGIN_TOP + 12}" fill="#777">every x is 0</text>'
    return _svg(_axes(x_label, y_label, x_end, 1.0) + "".join(dots) + note, label)


def histogram(values: list[float], x_label: str, label: str, bins: int = 12) -> str:
    """Counts of `values` in equal bins from 0 to the (rounded) largest value."""
    if not values:
        return _svg('<text x="10" y="20">no data</text>', label, height=40)
    left, bottom = MARGIN_LEFT - 70, HEIGHT - MARGIN_BOTTOM
    span_x, span_y = WIDTH - MARGIN_RIGHT - left, bottom - MARGIN_TOP
    x_end = _nice_max(max(values))
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int(max(0.0, value) / x_end * bins))] += 1
    y_end = _nice_max(max(counts))  # round ticks: 0, 1, 2… rather than 0, 0.6, 1.2…
    width = span_x / bins
    bars = []
    for i, count in enumerate(counts):
        h = count / y_end * span_y
        low, high = x_end * i / bins, x_end * (i + 1) / bins
        bars.append(
            f'<rect x="{left + i * width + 1:.1f}" y="{bottom - h:.1f}" width="{width - 2:.1f}" '
            f'height="{h:.1f}" fill="{BAR_COLOR}"><title>{_tick(low)}–{_tick(high)}: {count}'
            "</title></rect>"
        )
    return _svg(_axes(x_label, "tasks", x_end, y_end) + "".join(bars), label)


def matrix(
    cells: list[list[int]], rows: list[str], columns: list[str], label: str, good=((0, 0), (1, 1))
) -> str:
    """A table of counts drawn as shaded squares; `good` cells are tinted green, the others red."""
    size, left, top = 90, 150, 36
    width, height = left + size * len(columns) + 10, top + size * len(rows) + 10
    peak = max((n for row in cells for n in row), default=0) or 1
    parts = [
        f'<text x="{left + i * size + size / 2}" y="{top - 8}" text-anchor="middle">{esc(c)}</text>'
        for i, c in enumerate(columns)
    ]
    for r, name in enumerate(rows):
        y = top + r * size
        parts.append(
            f'<text x="{left - 6}" y="{y + size / 2}" text-anchor="end">{esc(name)}</text>'
        )
        for c, count in enumerate(cells[r]):
            hue = "46,139,87" if (r, c) in good else "192,57,43"
            alpha = 0.12 + 0.75 * count / peak
            parts.append(
                f'<rect x="{left + c * size}" y="{y}" width="{size - 2}" height="{size - 2}" '
                f'fill="rgba({hue},{alpha:.2f})"/><text x="{left + c * size + size / 2}" '
                f'y="{y + size / 2 + 6}" text-anchor="middle" font-size="18">{count}</text>'
            )
    return _svg("".join(parts), label, width=width, height=height)


def timeline(spans: list[tuple[str, float, float, float]], label: str) -> str:
    """One bar per (name, start s, duration s, cost $) along the run's time; cost as the title."""
    if not spans:
        return _svg('<text x="10" y="20">no turns</text>', label, height=40)
    row_h, left = 14, 110
    width = 900
    height = MARGIN_TOP + len(spans) * row_h + MARGIN_BOTTOM
    end = _nice_max(max(start + length for _, start, length, _ in spans))
    span_x = width - left - MARGIN_RIGHT
    parts = []
    for i, (name, start, length, cost) in enumerate(spans):
        y = MARGIN_TOP + i * row_h
        x, w = left + start / end * span_x, max(1.5, length / end * span_x)
        parts.append(
            f'<text x="{left - 6}" y="{y + 10}" text-anchor="end">{esc(name)}</text>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 3}" fill="{BAR_COLOR}">'
            f"<title>{esc(name)}: {length:.1f} s, ${cost:.4f}</title></rect>"
        )
    axis_y = height - MARGIN_BOTTOM + 4
    parts.append(
        f'<line x1="{left}" y1="{axis_y}" x2="{left + span_x}" y2="{axis_y}" stroke="#888"/>'
        + _x_ticks(left, span_x, axis_y, end, None, unit=" s")
    )
    return _svg("".join(parts), label, width=width, height=height)
