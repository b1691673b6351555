"""Inline SVG plots for the report, written by hand (no library, no script, no network).

Every plot is a ``<svg>`` string with a ``viewBox`` (it scales to the page's width), a
``data-plot`` name (what tests look for), a ``<title>`` for screen readers, and ``<title>``
tooltips on its marks. Times are milliseconds since the epoch and are shown in UTC.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from html import escape

WIDTH = 960
AXIS = "#8a94a3"
GRID = "#e6e9ef"
INK = "#1f2933"
MUTED = "#5f6b7a"
FONT = 'font-family="inherit" font-size="12"'


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def _num(value: float) -> str:
    """A coordinate, short: 2 decimals at most."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class TimeScale:
    """Times ``[t0, t1]`` onto pixels ``[x0, x1]``."""

    t0: int
    t1: int
    x0: float
    x1: float

    @classmethod
    def over(cls, times: Sequence[int], x0: float, x1: float) -> TimeScale:
        lo, hi = (min(times), max(times)) if times else (0, 1)
        pad = max(1, (hi - lo) // 40)
        return cls(lo - pad, hi + pad, x0, x1)

    def x(self, t: float) -> float:
        return self.x0 + (t - self.t0) * (self.x1 - self.x0) / max(1, self.t1 - self.t0)

    def ticks(self, target: int = 7) -> list[tuple[int, str]]:
        """Round times between t0 and t1, labelled in UTC."""
        span = max(1, self.t1 - self.t0)
        steps = [1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
                 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000,
                 43_200_000, 86_400_000]
        step = next((s for s in steps if span / s <= target), steps[-1] * math.ceil(
            span / steps[-1] / target))
        fmt = "%H:%M:%S" if step < 60_000 else "%H:%M" if step < 86_400_000 else "%m-%d"
        first = -(-self.t0 // step) * step
        return [(t, datetime.fromtimestamp(t / 1000, UTC).strftime(fmt))
                for t in range(first, self.t1 + 1, step)]


def nice_max(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above ``value``."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return float(next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value))


def _frame(name: str, title: str, height: int, body: list[str]) -> str:
    return (f'<svg class="plot" data-plot="{esc(name)}" viewBox="0 0 {WIDTH} {height}" '
            f'role="img" xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>'
            + "".join(body) + "</svg>")


def empty_plot(name: str, title: str, message: str, height: int = 120) -> str:
    """A plot with nothing to show yet, saying why."""
    return _frame(name, title, height, [
        f'<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{height - 1}" rx="8" fill="#f7f8fa" '
        f'stroke="{GRID}"/>',
        f'<text x="{WIDTH / 2}" y="{height / 2 + 4}" text-anchor="middle" fill="{MUTED}" '
        f'{FONT}>{esc(message)}</text>'])


def _time_axis(scale: TimeScale, top: float, bottom: float) -> list[str]:
    out = []
    for t, label in scale.ticks():
        x = _num(scale.x(t))
        out.append(f'<line x1="{x}" x2="{x}" y1="{_num(top)}" y2="{_num(bottom)}" '
                   f'stroke="{GRID}"/>')
        out.append(f'<text x="{x}" y="{_num(bottom + 16)}" text-anchor="middle" '
                   f'fill="{MUTED}" {FONT}>{label}</text>')
    out.append(f'<line x1="{_num(scale.x0)}" x2="{_num(scale.x1)}" y1="{_num(bottom)}" '
               f'y2="{_num(bottom)}" stroke="{AXIS}"/>')
    return out


@dataclass(frozen=True)
class Series:
    """A line over time: ``points`` are (time, value); ``step`` draws it as a staircase."""

    name: str
    points: Sequence[tuple[int, float]]
    color: str
    step: bool = False
    area: bool = False
    right_axis: bool = False


@dataclass(frozen=True)
class Bar:
    """A bar over ``[start, end]`` of height ``value``."""

    start: int
    end: int
    value: float
    color: str
    tooltip: str = ""


@dataclass(frozen=True)
class Chart:
    """A time chart: bars, lines, an optional threshold line and a left (and right) axis."""

    name: str
    title: str
    y_label: str
    fmt: Callable[[float], str]
    series: Sequence[Series] = ()
    bars: Sequence[Bar] = ()
    threshold: tuple[float, str] | None = None
    right_label: str = ""
    right_fmt: Callable[[float], str] = str
    marks: Sequence[tuple[int, str, str]] = field(default_factory=tuple)  # (time, label, color)
    height: int = 260

    def svg(self) -> str:
        left, right, top, bottom = 70, WIDTH - (70 if self.right_label else 20), 28, \
            self.height - 34
        times = [p[0] for s in self.series for p in s.points]
        times += [t for b in self.bars for t in (b.start, b.end)]
        times += [m[0] for m in self.marks]
        scale = TimeScale.over(times, left, right)
        values = [p[1] for s in self.series if not s.right_axis for p in s.points]
        values += [b.value for b in self.bars]
        if self.threshold:
            values.append(self.threshold[0])
        top_value = nice_max(max(values, default=0) * 1.08)
        right_top = nice_max(max((p[1] for s in self.series if s.right_axis
                                  for p in s.points), default=0) * 1.08)

        def y(v: float, axis_top: float = top_value) -> float:
            return bottom - (bottom - top) * v / axis_top

        out = _time_axis(scale, top, bottom)
        for i in range(5):
            v = top_value * i / 4
            yy = _num(y(v))
            out.append(f'<line x1="{left}" x2="{right}" y1="{yy}" y2="{yy}" stroke="{GRID}"/>')
            out.append(f'<text x="{left - 8}" y="{yy}" dy="4" text-anchor="end" '
                       f'fill="{MUTED}" {FONT}>{esc(self.fmt(v))}</text>')
            if self.right_label:
                rv = right_top * i / 4
                out.append(f'<text x="{right + 8}" y="{yy}" dy="4" fill="{MUTED}" '
                           f'{FONT}>{esc(self.right_fmt(rv))}</text>')
        out.append(f'<text x="{left}" y="16" fill="{MUTED}" {FONT}>{esc(self.y_label)}</text>')
        if self.right_label:
            out.append(f'<text x="{right}" y="16" text-anchor="end" fill="{MUTED}" '
                       f'{FONT}>{esc(self.right_label)}</text>')
        for t, label, color in self.marks:
            x = _num(scale.x(t))
            out.append(f'<line x1="{x}" x2="{x}" y1="{top}" y2="{bottom}" stroke="{color}" '
                       f'stroke-dasharray="4 3"><title>{esc(label)}</title></line>')
            out.append(f'<text x="{x}" y="{top - 4}" text-anchor="middle" fill="{color}" '
                       f'{FONT}>{esc(label)}</text>')
        for b in self.bars:
            x0, x1 = scale.x(b.start), scale.x(b.end)
            width = max(2.0, x1 - x0)
            out.append(f'<rect x="{_num(x0)}" y="{_num(y(b.value))}" width="{_num(width)}" '
                       f'height="{_num(bottom - y(b.value))}" fill="{b.color}" rx="1">'
                       f'<title>{esc(b.tooltip)}</title></rect>')
        for s in self.series:
            axis_top = right_top if s.right_axis else top_value
            out += _series(s, scale, partial(y, axis_top=axis_top), bottom)
        if self.threshold:
            value, label = self.threshold
            yy = _num(y(value))
            out.append(f'<line x1="{left}" x2="{right}" y1="{yy}" y2="{yy}" stroke="#d62828" '
                       f'stroke-dasharray="6 4"/>')
            out.append(f'<text x="{right - 4}" y="{yy}" dy="-5" text-anchor="end" '
                       f'fill="#d62828" {FONT}>{esc(label)}</text>')
        return _frame(self.name, self.title, self.height, out)


def _series(s: Series, scale: TimeScale, y: Callable[[float], float], bottom: float
            ) -> list[str]:
    if not s.points:
        return []
    coords: list[tuple[float, float]] = []
    for i, (t, v) in enumerate(s.points):
        if s.step and i:
            coords.append((scale.x(t), coords[-1][1]))
        coords.append((scale.x(t), y(v)))
    path = " ".join(f"{_num(x)},{_num(yy)}" for x, yy in coords)
    out = []
    if s.area:
        out.append(f'<polygon points="{_num(coords[0][0])},{_num(bottom)} {path} '
                   f'{_num(coords[-1][0])},{_num(bottom)}" fill="{s.color}" '
                   f'fill-opacity="0.12"/>')
    out.append(f'<polyline points="{path}" fill="none" stroke="{s.color}" stroke-width="2" '
               f'stroke-linejoin="round"><title>{esc(s.name)}</title></polyline>')
    if len(s.points) <= 200:  # dots with tooltips while they stay readable
        for (_, v), (x, yy) in zip(s.points, coords[::2] if s.step else coords, strict=False):
            out.append(f'<circle cx="{_num(x)}" cy="{_num(yy)}" r="2.5" fill="{s.color}">'
                       f'<title>{esc(s.name)}: {esc(v)}</title></circle>')
    return out


@dataclass(frozen=True)
class Segment:
    """A stretch of a lane ``[start, end]``; ``outline`` draws a frame (a highlight); a
    band names the ``lane`` it shades (``None``: all of them)."""

    start: int
    end: int
    color: str
    tooltip: str
    outline: str | None = None
    lane: str | None = None


@dataclass(frozen=True)
class Lane:
    label: str
    segments: Sequence[Segment]


def lanes(name: str, title: str, rows: Sequence[Lane], *, bands: Sequence[Segment] = (),
          marks: Sequence[tuple[int, str, str]] = ()) -> str:
    """Horizontal lanes over time (a Gantt chart); ``bands`` shade a time span of their lane
    (or of all), ``marks`` are vertical lines with a label."""
    left, right, top, lane_h = 270, WIDTH - 16, 26, 24
    bottom = top + lane_h * max(1, len(rows))
    height = bottom + 30
    times = [t for row in rows for s in row.segments for t in (s.start, s.end)]
    times += [m[0] for m in marks] + [t for b in bands for t in (b.start, b.end)]
    scale = TimeScale.over(times, left, right)
    out = _time_axis(scale, top, bottom)
    for t, label, color in marks:
        x = _num(scale.x(t))
        out.append(f'<line x1="{x}" x2="{x}" y1="{top - 6}" y2="{bottom}" stroke="{color}" '
                   f'stroke-dasharray="4 3"/>')
        out.append(f'<text x="{x}" y="{top - 10}" text-anchor="middle" fill="{color}" '
                   f'{FONT}>{esc(label)}</text>')
    index = {row.label: i for i, row in enumerate(rows)}
    for i, row in enumerate(rows):
        y = top + i * lane_h
        if i % 2 == 0:
            out.append(f'<rect x="{left}" y="{y}" width="{right - left}" height="{lane_h}" '
                       f'fill="#f7f8fa"/>')
        label = row.label if len(row.label) <= 40 else "…" + row.label[-39:]
        out.append(f'<text x="{left - 8}" y="{y + lane_h / 2 + 4}" text-anchor="end" '
                   f'fill="{INK}" {FONT}><title>{esc(row.label)}</title>{esc(label)}</text>')
        for s in row.segments:
            x0, x1 = scale.x(s.start), scale.x(s.end)
            stroke = f' stroke="{s.outline}" stroke-width="2"' if s.outline else ""
            out.append(f'<rect x="{_num(x0)}" y="{y + 4}" width="{_num(max(1.5, x1 - x0))}" '
                       f'height="{lane_h - 8}" fill="{s.color}" rx="2"{stroke}>'
                       f'<title>{esc(s.tooltip)}</title></rect>')
    for band in bands:
        lane = None if band.lane is None else index.get(band.lane)
        y0, h = (top, bottom - top) if lane is None else (top + lane * lane_h, lane_h)
        x0, x1 = scale.x(band.start), scale.x(band.end)
        out.append(f'<rect x="{_num(x0)}" y="{y0}" width="{_num(max(3.0, x1 - x0))}" '
                   f'height="{h}" fill="{band.color}" fill-opacity="0.28" stroke="{band.color}"'
                   f' stroke-width="2"><title>{esc(band.tooltip)}</title></rect>')
    return _frame(name, title, height, out)


def stacked_bar(name: str, title: str, parts: Sequence[tuple[str, int, str]]) -> str:
    """One horizontal bar split into ``(label, count, color)`` parts, with a legend."""
    total = sum(n for _, n, _ in parts)
    left, right, height = 10, WIDTH - 10, 74
    out, x = [], float(left)
    for label, n, color in parts:
        if not n:
            continue
        width = (right - left) * n / max(1, total)
        out.append(f'<rect x="{_num(x)}" y="8" width="{_num(max(2.0, width))}" height="26" '
                   f'fill="{color}"><title>{esc(label)}: {n}</title></rect>')
        x += width
    lx = float(left)
    for label, n, color in parts:
        text = f"{label} {n}"
        out.append(f'<rect x="{_num(lx)}" y="48" width="12" height="12" rx="2" fill="{color}"/>')
        out.append(f'<text x="{_num(lx + 17)}" y="58" fill="{INK}" {FONT}>{esc(text)}</text>')
        lx += 30 + 7.2 * len(text)
    return _frame(name, title, height, out)


def tiles(name: str, title: str, rows: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> str:
    """Small squares in rows, one row per label: ``(label, [(color, tooltip)...])``."""
    size, gap, left = 20, 4, 270
    per_row = max(1, (WIDTH - left - 10) // (size + gap))
    out, y = [], 6
    for label, cells in rows:
        out.append(f'<text x="{left - 8}" y="{y + size - 2}" text-anchor="end" fill="{INK}" '
                   f'{FONT}>{esc(label)}</text>')
        for i, (color, tooltip) in enumerate(cells):
            row, col = divmod(i, per_row)
            out.append(f'<rect x="{left + col * (size + gap)}" y="{y + row * (size + gap)}" '
                       f'width="{size}" height="{size}" rx="3" fill="{color}">'
                       f'<title>{esc(tooltip)}</title></rect>')
        y += max(1, math.ceil(len(cells) / per_row)) * (size + gap) + 10
    return _frame(name, title, y, out)
