"""The cost curve as a plot: seconds per million cells against the size, one panel per step
(copy, replay, validation), one line per tool and engine, from ``bench/scale.py``'s JSON.

Usage: ``python bench/scale_plot.py [bench/out/scale.json] [--out docs/scale-curve.svg]
[--with-before]``

Writes a plain SVG (no plotting library needed): the size on a log axis, seconds per million
cells from 0; a line that falls with size amortises a fixed start-up, a flat one costs the
same per cell at every size. The runs of ``--before`` (another checkout) are left out unless
``--with-before``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

STEPS = ("copy", "replay", "validate")
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#7f7f7f")
WIDTH, HEIGHT, PANEL, TOP, LEFT, BOTTOM = 330, 300, 330, 40, 50, 130


def series(runs: list[dict[str, Any]], step: str) -> dict[str, list[tuple[int, float]]]:
    """Each line of a step's panel: its label -> (cells, seconds per million cells)."""
    lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for run in runs:
        if run["step"] != step:
            continue
        tool = str(run["tool"])
        label = tool if not tool.startswith("hbase-migrate") else f"hbase-migrate, {run['engine']}"
        lines[label].append((int(run["cells"]), float(run["seconds_per_million_cells"])))
    return {label: sorted(points) for label, points in lines.items()}


def panel(x0: int, step: str, lines: dict[str, list[tuple[int, float]]],
          sizes: list[int]) -> list[str]:
    """One step's panel at ``x0``: axes, ticks, lines and their legend."""
    top = max((s for points in lines.values() for _, s in points), default=1.0) * 1.1
    low, high = math.log10(min(sizes)), math.log10(max(sizes))
    span = (high - low) or 1.0
    inner = WIDTH - LEFT - 20

    def x(cells: int) -> float:
        return x0 + LEFT + 10 + (math.log10(cells) - low) / span * (inner - 20)

    def y(seconds: float) -> float:
        return TOP + HEIGHT - seconds / top * HEIGHT

    out = [f'<text x="{x0 + LEFT + inner / 2}" y="{TOP - 14}" text-anchor="middle" '
           f'font-weight="bold">{escape(step)}</text>',
           f'<rect x="{x0 + LEFT}" y="{TOP}" width="{inner}" height="{HEIGHT}" '
           'fill="none" stroke="#444"/>']
    for i in range(6):
        value = top * i / 5
        out.append(f'<text x="{x0 + LEFT - 4}" y="{y(value) + 4}" text-anchor="end">'
                   f'{value:.0f}</text>')
    for cells in sizes:
        out.append(f'<text x="{x(cells)}" y="{TOP + HEIGHT + 16}" text-anchor="middle">'
                   f'{cells:,}</text>')
    for i, (label, points) in enumerate(sorted(lines.items())):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x(c):.1f},{y(s):.1f}" for c, s in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   'stroke-width="2"/>')
        out += [f'<circle cx="{x(c):.1f}" cy="{y(s):.1f}" r="3" fill="{colour}"/>'
                for c, s in points]
        legend_y = TOP + HEIGHT + 58 + 16 * i
        out.append(f'<rect x="{x0 + LEFT}" y="{legend_y - 9}" width="12" height="4" '
                   f'fill="{colour}"/><text x="{x0 + LEFT + 18}" y="{legend_y}">'
                   f'{escape(label)}</text>')
    return out


def draw(data: dict[str, Any]) -> str:
    runs = data["runs"]
    sizes = sorted({int(r["cells"]) for r in runs})
    steps = [s for s in STEPS if any(r["step"] == s for r in runs)]
    width, height = PANEL * len(steps) + 20, TOP + HEIGHT + BOTTOM
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            'font-family="sans-serif" font-size="11">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="12" y="{TOP + HEIGHT / 2}" transform="rotate(-90 12 '
            f'{TOP + HEIGHT / 2})" text-anchor="middle">seconds per million cells</text>']
    for i, step in enumerate(steps):
        body += panel(10 + i * PANEL, step, series(runs, step), sizes)
    version = escape(str(data.get("hbase_version", "")))
    body.append(f'<text x="{width / 2}" y="{TOP + HEIGHT + 30}" text-anchor="middle">'
                f"cells compared (log scale); real HBase {version}</text>")
    return "\n".join([*body, "</svg>", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, nargs="?", default=Path("bench/out/scale.json"))
    parser.add_argument("--out", type=Path, default=Path("docs/scale-curve.svg"))
    parser.add_argument("--with-before", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.json.read_text(encoding="utf-8"))
    if not args.with_before:
        data["runs"] = [r for r in data["runs"] if not str(r["engine"]).endswith("(before)")]
    args.out.write_text(draw(data), encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
