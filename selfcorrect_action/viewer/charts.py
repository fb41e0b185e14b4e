"""The small bar charts of tokens and cost per attempt: geometry computed here, drawn by the
template as inline SVG (no script, no style attribute: the page's policy allows neither).
The attempts table beside them carries the same numbers as text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from selfcorrect_action.report import text

HEIGHT = 100  # the bars' room; the attempt numbers go below
LABELS = 16
SLOT = 40  # horizontal room per attempt, before the chart is squeezed to MAX_WIDTH
MAX_WIDTH = 960
MIN_WIDTH = 320
MIN_LABELLED_SLOT = 14  # narrower than this, the numbers would overlap: none are drawn
MIN_BAR = 1.0  # a bar of zero still shows where its attempt is


@dataclass(frozen=True)
class Bar:
    index: int
    x: float
    width: float
    y: float
    height: float
    result: str  # the css class: passed, failed, pending
    label: str  # "attempt 3: 1,234 tokens"
    middle: float  # where its number goes



@dataclass(frozen=True)
class Chart:
    title: str
    width: float
    height: int
    bars: list[Bar]
    top: str  # the largest value, in words: the scale of the chart
    note: str = ""
    numbered: bool = True  # the attempt numbers fit under the bars
    baseline: int = HEIGHT


@dataclass(frozen=True)
class Point:
    index: int
    value: float
    result: str


def bar_chart(title: str, points: Sequence[Point], *, unit: str, note: str = "") -> Chart:
    slot = min(SLOT, MAX_WIDTH / max(1, len(points)))
    width = max(slot * len(points), MIN_WIDTH)
    left = (width - slot * len(points)) / 2  # a few bars stand in the middle
    top = max((point.value for point in points), default=0.0)
    bars = []
    for position, point in enumerate(points):
        height = max(MIN_BAR, HEIGHT * point.value / top) if top > 0 else MIN_BAR
        x = left + position * slot
        bars.append(Bar(point.index, round(x + slot * 0.15, 2), round(slot * 0.7, 2),
                        round(HEIGHT - height, 2), round(height, 2), point.result,
                        f"attempt {point.index}: {_amount(point.value, unit)}",
                        round(x + slot / 2, 2)))
    return Chart(title, round(width, 2), HEIGHT + LABELS, bars, _amount(top, unit), note,
                 numbered=slot >= MIN_LABELLED_SLOT)


def _amount(value: float, unit: str) -> str:
    if unit == "usd":
        return text.money(value, known=True)
    return text.plural(int(value), unit)
