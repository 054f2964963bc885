"""The group's history as bar charts: laid out once, drawn as SVG (the page) or PNG (chat, chart_png.py).

    drawn = charts.of_history(history, name)      # four Charts: per month, per presenter, per tag, attendance
    html = charts.svg(drawn[0], "months")          # <svg viewBox=…> with a <title>, a <desc> and every number

Hand-drawn rather than with a plotting library: four bar charts need rectangles and text, and
matplotlib with numpy would add 174 MB to an install of 73 (docs/architecture.md). Each chart reads
without JavaScript or CSS: its numbers are written beside its bars, its <title> and <desc> say it
all to a screen reader, and its text is escaped (names and tags are members' text).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from bot.schedule.history import History

#: What the text of a chart is drawn in: a system sans-serif, with Chinese and Japanese faces named.
FONTS = (
    "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', 'PingFang SC', "
    "'Hiragino Sans', 'Microsoft YaHei', 'WenQuanYi Zen Hei', sans-serif"
)
BAR = "#3b6ea5"
RULE = "#8888"
FONT_SIZE = 13
#: The widest a label is drawn, in ems: a longer name or tag is cut with an ellipsis.
LABEL_EMS = 14.0
WIDTH = 340


@dataclass(frozen=True)
class Chart:
    """One bar chart: its title, what its bars count (`unit`, singular and plural), and the bars, each a
    label and a number; `across`: bars stand side by side along time, else each on a row of its own."""

    key: str
    title: str
    unit: tuple[str, str]
    bars: list[tuple[str, int]]
    across: bool
    note: str = ""

    def counted(self, n: int) -> str:
        return f"{n} {self.unit[0] if n == 1 else self.unit[1]}"

    @property
    def about(self) -> str:
        """Every bar in words: the chart's description for whoever cannot see it."""
        if not self.bars:
            return f"{self.title}: none yet."
        return f"{self.title}: " + "; ".join(f"{label}, {self.counted(n)}" for label, n in self.bars) + "."


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    tip: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"  # start, middle or end, as SVG's text-anchor
    faint: bool = False
    slanted: bool = False  # turned 45° up to the left, ending at (x, y): a date under a narrow bar
    bold: bool = False


@dataclass
class Drawing:
    width: float
    height: float
    rects: list[Rect] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)


def ems(text: str) -> float:
    """How wide `text` is, in ems, near enough: a wide (CJK) character is one, anything else about half."""
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.62 for c in text)


def fit(text: str, most: float = LABEL_EMS) -> str:
    """`text` cut to `most` ems, an ellipsis at the cut."""
    if ems(text) <= most:
        return text
    out = ""
    for c in text:
        if ems(out + c + "…") > most:
            break
        out += c
    return out + "…"


def of_history(history: History, name: Callable[[str], str]) -> list[Chart]:
    """The four charts of a history; `name` gives a presenter's name as readers know it."""
    return [
        Chart("months", "Talks per month", ("talk", "talks"), history.months, across=True),
        Chart(
            "presenters",
            "Talks per presenter",
            ("talk", "talks"),
            [(name(member), n) for member, n in history.presenters],
            across=False,
            note=_more(history.all_presenters, len(history.presenters), "presenters"),
        ),
        Chart(
            "tags",
            "Talks per tag",
            ("talk", "talks"),
            history.tags,
            across=False,
            note=_more(history.all_tags, len(history.tags), "tags"),
        ),
        Chart(
            "attendance",
            "Going, per meeting",
            ("member", "members"),
            [(t.meeting.strftime("%Y-%m-%d"), t.going) for t in history.attendance],
            across=True,
        ),
    ]


def _more(every: int, shown: int, what: str) -> str:
    return f"The first {shown} of {every} {what}." if every > shown else ""


TITLE_H = 28
ROW = 22


def layout(chart: Chart, width: float = WIDTH) -> Drawing:
    """Where each bar and label of `chart` goes, in a box `width` wide (its height follows)."""
    drawing = Drawing(width, 0)
    drawing.labels.append(Label(0, 18, chart.title, bold=True))
    if not chart.bars:
        drawing.labels.append(Label(0, TITLE_H + 18, "Nothing yet.", faint=True))
        drawing.height = TITLE_H + 30
        return drawing
    top = max(n for _, n in chart.bars) or 1
    if chart.across:
        _columns(drawing, chart, top)
    else:
        _rows(drawing, chart, top)
    if chart.note:
        drawing.labels.append(Label(0, drawing.height + 14, chart.note, faint=True))
        drawing.height += 22
    return drawing


def _rows(drawing: Drawing, chart: Chart, top: int) -> None:
    """One row a bar: its label on the left, its bar and then its number."""
    labels = [fit(label) for label, _ in chart.bars]
    left = min(max(ems(t) for t in labels) * FONT_SIZE + 10, drawing.width / 2)
    room = drawing.width - left - 8 - ems(str(top)) * FONT_SIZE - 6
    for i, ((label, n), shown) in enumerate(zip(chart.bars, labels, strict=True)):
        y = TITLE_H + i * ROW
        w = room * n / top
        drawing.labels.append(Label(left - 8, y + 15, shown, anchor="end"))
        drawing.rects.append(Rect(left, y + 3, max(w, 1 if n else 0), ROW - 6, f"{label}: {chart.counted(n)}"))
        drawing.labels.append(Label(left + w + 4, y + 15, str(n)))
    drawing.rules.append((left, TITLE_H, left, TITLE_H + len(chart.bars) * ROW))
    drawing.height = TITLE_H + len(chart.bars) * ROW + 6


def _columns(drawing: Drawing, chart: Chart, top: int) -> None:
    """Bars side by side, oldest first: its number above each, its label slanted below."""
    high = 120
    below = max(ems(label) for label, _ in chart.bars) * FONT_SIZE * 0.72 + 14
    left = max(10.0, below - 14)  # the first slanted label ends under its bar and leans left of it
    step = min(40.0, (drawing.width - left - 4) / len(chart.bars))
    base = TITLE_H + 16 + high
    for i, (label, n) in enumerate(chart.bars):
        x = left + i * step
        h = high * n / top
        drawing.rects.append(Rect(x + step * 0.15, base - h, step * 0.7, h, f"{label}: {chart.counted(n)}"))
        drawing.labels.append(Label(x + step / 2, base - h - 4, str(n), anchor="middle"))
        drawing.labels.append(Label(x + step / 2 + 4, base + 12, label, anchor="end", faint=True, slanted=True))
    drawing.rules.append((left - 4, base, left + len(chart.bars) * step + 4, base))
    drawing.height = base + below


def _number(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0")


def svg(chart: Chart, width: float = WIDTH) -> str:
    """`chart` as an SVG element to put in a page: scales to its box (viewBox), titled and described."""
    d = layout(chart, width)
    ids = f"chart-{chart.key}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_number(d.width)} {_number(d.height)}" '
        f'width="{_number(d.width)}" height="{_number(d.height)}" role="img" '
        f'aria-labelledby="{ids}-title {ids}-desc" font-family={quoteattr(FONTS)} font-size="{FONT_SIZE}">',
        f'<title id="{ids}-title">{escape(chart.title)}</title>',
        f'<desc id="{ids}-desc">{escape(chart.about)}</desc>',
    ]
    for x1, y1, x2, y2 in d.rules:
        out.append(
            f'<line x1="{_number(x1)}" y1="{_number(y1)}" x2="{_number(x2)}" y2="{_number(y2)}" stroke="{RULE}"/>'
        )
    for r in d.rects:
        out.append(
            f'<rect x="{_number(r.x)}" y="{_number(r.y)}" width="{_number(r.w)}" height="{_number(r.h)}" '
            f'fill="{BAR}"><title>{escape(r.tip)}</title></rect>'
        )
    for t in d.labels:
        # The page's own colour (light or dark), the faint a little lighter.
        attrs = f'x="{_number(t.x)}" y="{_number(t.y)}" fill="currentColor"'
        if t.faint:
            attrs += ' fill-opacity="0.7"'
        if t.anchor != "start":
            attrs += f' text-anchor="{t.anchor}"'
        if t.slanted:
            attrs += f' transform="rotate(-45 {_number(t.x)} {_number(t.y)})"'
        if t.bold:
            attrs += ' font-weight="bold" font-size="15"'
        out.append(f"<text {attrs}>{escape(t.text)}</text>")
    out.append("</svg>")
    return "\n".join(out)
