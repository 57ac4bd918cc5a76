"""Tiny, dependency-free SVG charts for the release report (inline in one HTML file).

Three chart kinds: a step chart (cumulative budget over releases), a bar chart (a binned
probability law) and an interval chart (a released table: one bar per cell with its error
bar).  Every number is formatted by this module, so the markup never depends on locale or
on a plotting library's version.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 520, 200
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 56, 16, 14, 36


def _fmt(x: float) -> str:
    """A tick label: thousands separators, no exponent below 10^15."""
    if x != 0 and (abs(x) >= 1e15 or abs(x) < 1e-4):
        return f"{x:.3g}"
    if abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def _ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> list[float]:
    """About ``n`` round tick values covering [lo, hi] (whole numbers only if ``integer``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    if integer:
        raw = max(raw, 1.0)
    mag = 10 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)  # 2.5: not a release number
    step = min((m * mag for m in steps if m * mag >= raw), default=raw)
    first = math.ceil(lo / step) * step
    out, t = [], first
    while t <= hi + step * 1e-9 and len(out) < 20:
        out.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return out


class _Frame:
    """Maps data coordinates to the SVG canvas and draws the axes."""

    def __init__(self, x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> None:
        if x_hi <= x_lo:
            x_hi = x_lo + 1.0
        if y_hi <= y_lo:
            y_hi = y_lo + 1.0
        self.x_lo, self.x_hi, self.y_lo, self.y_hi = x_lo, x_hi, y_lo, y_hi
        self.w = WIDTH - PAD_LEFT - PAD_RIGHT
        self.h = HEIGHT - PAD_TOP - PAD_BOTTOM

    def x(self, v: float) -> float:
        return PAD_LEFT + (v - self.x_lo) / (self.x_hi - self.x_lo) * self.w

    def y(self, v: float) -> float:
        return PAD_TOP + (1 - (v - self.y_lo) / (self.y_hi - self.y_lo)) * self.h

    def axes(self, x_label: str, y_label: str, integer_x: bool = False) -> list[str]:
        x0, y0 = PAD_LEFT, PAD_TOP + self.h
        parts = [f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0 + self.w}" y2="{y0}"/>',
                 f'<line class="axis" x1="{x0}" y1="{PAD_TOP}" x2="{x0}" y2="{y0}"/>']
        for t in _ticks(self.x_lo, self.x_hi, integer=integer_x):
            px = self.x(t)
            parts.append(f'<line class="tick" x1="{px:.1f}" y1="{y0}" x2="{px:.1f}" '
                         f'y2="{y0 + 4}"/><text x="{px:.1f}" y="{y0 + 16}" '
                         f'text-anchor="middle">{_fmt(t)}</text>')
        for t in _ticks(self.y_lo, self.y_hi, 4):
            py = self.y(t)
            parts.append(f'<line class="grid" x1="{x0}" y1="{py:.1f}" x2="{x0 + self.w}" '
                         f'y2="{py:.1f}"/><text x="{x0 - 6}" y="{py + 4:.1f}" '
                         f'text-anchor="end">{_fmt(t)}</text>')
        parts.append(f'<text x="{x0 + self.w / 2:.1f}" y="{HEIGHT - 4}" '
                     f'text-anchor="middle">{escape(x_label)}</text>')
        parts.append(f'<text x="12" y="{PAD_TOP + self.h / 2:.1f}" text-anchor="middle" '
                     f'transform="rotate(-90 12 {PAD_TOP + self.h / 2:.1f})">'
                     f'{escape(y_label)}</text>')
        return parts


def _svg(body: list[str], title: str) -> str:
    """The chart as a captioned figure (the caption is the visible title)."""
    return (f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg></figure>")


def step_chart(values: Sequence[float], *, limit: float | None, title: str,
               x_label: str = "release number", y_label: str = "cumulative") -> str:
    """Cumulative values after release 1..n as a step line, with an optional limit line."""
    ys = [0.0, *(float(v) for v in values)]
    top = max([*ys, limit or 0.0, 1e-12]) * 1.08
    last = len(ys) - 1
    f = _Frame(0, max(last, 1) + 0.5, 0.0, top)
    body = f.axes(x_label, y_label, integer_x=True)  # releases are numbered 1, 2, ...
    pts = [f"{f.x(0):.1f},{f.y(0):.1f}"]
    for i in range(1, len(ys)):
        pts.append(f"{f.x(i):.1f},{f.y(ys[i - 1]):.1f}")
        pts.append(f"{f.x(i):.1f},{f.y(ys[i]):.1f}")
    pts.append(f"{f.x(max(last, 1) + 0.5):.1f},{f.y(ys[last]):.1f}")  # the level reached
    body.append(f'<polyline class="series" points="{" ".join(pts)}"/>')
    if limit is not None and math.isfinite(limit):
        body.append(f'<line class="limit" x1="{PAD_LEFT}" y1="{f.y(limit):.1f}" '
                    f'x2="{f.x(f.x_hi):.1f}" y2="{f.y(limit):.1f}"/>'
                    f'<text class="limit-label" x="{f.x(f.x_hi) - 4:.1f}" '
                    f'y="{f.y(limit) - 4:.1f}" text-anchor="end">total {_fmt(limit)}</text>')
    return _svg(body, title)


def bar_chart(edges: Sequence[float], heights: Sequence[float], *, title: str,
              x_label: str, y_label: str = "probability", marker: float | None = None) -> str:
    """Bars over consecutive bins ``[edges[i], edges[i+1])`` (len(edges) = len(heights) + 1)."""
    if len(edges) != len(heights) + 1:
        raise ValueError("bar_chart needs one more edge than heights")
    top = max([*(float(h) for h in heights), 1e-12]) * 1.08
    f = _Frame(float(edges[0]), float(edges[-1]), 0.0, top)
    body = f.axes(x_label, y_label)
    for a, b, h in zip(edges[:-1], edges[1:], heights, strict=True):
        x0, x1 = f.x(float(a)), f.x(float(b))
        y1 = f.y(float(h))
        body.append(f'<rect class="bar" x="{x0:.2f}" y="{y1:.2f}" '
                    f'width="{max(x1 - x0 - 0.4, 0.4):.2f}" height="{f.y(0) - y1:.2f}"/>')
    if marker is not None and edges[0] <= marker <= edges[-1]:
        mx = f.x(marker)
        body.append(f'<line class="marker" x1="{mx:.1f}" y1="{PAD_TOP}" x2="{mx:.1f}" '
                    f'y2="{f.y(0):.1f}"/>')
    return _svg(body, title)


def interval_chart(labels: Sequence[str], values: Sequence[float], lows: Sequence[float] | None,
                   highs: Sequence[float] | None, *, title: str, x_label: str) -> str:
    """A released table as horizontal bars (one per cell, from 0 to its released value)
    with each cell's error bar ``[low, high]`` drawn across it (no error bars: ``None``)."""
    n = len(values)
    row, left, right, top, bottom = 22, 130, 24, 8, 36
    height = top + bottom + row * max(n, 1)
    ends = [0.0, *(float(v) for v in values)]
    if lows is not None and highs is not None:
        ends += [float(v) for v in (*lows, *highs)]
    finite = [v for v in ends if math.isfinite(v)]
    lo, hi = min(finite), max(finite)
    pad = (hi - lo) * 0.04 or 1.0
    lo, hi = (lo - pad if lo < 0 else lo), hi + pad
    width = WIDTH + 100
    span = width - left - right

    def x(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * span

    y0 = top + row * n
    body = [f'<line class="axis" x1="{left}" y1="{y0}" x2="{width - right}" y2="{y0}"/>',
            f'<line class="axis" x1="{x(0):.1f}" y1="{top}" x2="{x(0):.1f}" y2="{y0}"/>']
    for t in _ticks(lo, hi):
        body.append(f'<line class="grid" x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" '
                    f'y2="{y0}"/><text x="{x(t):.1f}" y="{y0 + 14}" text-anchor="middle">'
                    f"{_fmt(t)}</text>")
    for i, v in enumerate(values):
        yc = top + row * i + row / 2
        a, b = sorted((x(0.0), x(float(v))))
        body.append(f'<text x="{left - 6}" y="{yc + 4:.1f}" text-anchor="end">'
                    f"{escape(labels[i][:22])}</text>"
                    f'<rect class="bar" x="{a:.2f}" y="{yc - 7:.1f}" '
                    f'width="{max(b - a, 0.5):.2f}" height="14"/>')
        if lows is not None and highs is not None:
            l, h = x(float(lows[i])), x(float(highs[i]))
            body.append(f'<path class="errbar" d="M{l:.1f},{yc - 5:.1f}V{yc + 5:.1f}'
                        f'M{l:.1f},{yc:.1f}H{h:.1f}M{h:.1f},{yc - 5:.1f}V{yc + 5:.1f}"/>')
    body.append(f'<text x="{left + span / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                f"{escape(x_label)}</text>")
    return (f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart table-chart" role="img" '
            f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg></figure>")
