"""A large JSON body shown by windows: consecutive ranges of its pretty-printed lines, each highlighted alone.

A page sends the first window and loads the others as the reader scrolls to them. Windows are
cut at line boundaries, so each one's text is exact and their concatenation is the whole body.
The cut is planned in one pass over the value that measures lines rather than writing them: a
line's size in the page is estimated from its text (the highlighting adds a roughly constant
markup per line and per token), and a window closes before the line that would take it past
``WINDOW_BYTES``. A single line larger than that (one huge string) is a window of its own.

The same pass counts each container's line breaks, which lets a window late in the body be
rendered without walking what comes before it (``jsonview.render``), and says on which line
any JSON pointer starts, so a page can tell which window holds a card's part of the body.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from web.bodies.jsonview import Mark, Rendered, render

WINDOW_BYTES = 250_000
"""Estimated HTML of one window: the payload page's first response carries one beside a page of cards, under 1 MB
in all (a card's mark reopened on every line makes the page about 1.5 times the estimate)."""

PANE_WINDOW_BYTES = 100_000
"""The same for a pane of the diff page, whose first response carries one window of each side (a change's marks
nest in its card's, both reopened on every line: a pane's page is up to about three times the estimate)."""

LINE_BYTES = 120
"""Markup of a line beyond its text: its block, the spans of its tokens, a mark reopened on it."""

TOKEN_BYTES = 30
"""Markup around one highlighted token."""

QUOTE_BYTES = 4
"""A quote in the text becomes an entity in the page."""


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def window_span(starts: Sequence[int], lines: int, n: int) -> tuple[int, int]:
    """Window ``n``'s lines, ``[first, end)``: from its start to the next window's, the last to the body's end."""
    end = starts[n + 1] if n + 1 < len(starts) else lines
    return starts[n], end


@dataclass(slots=True)
class Layout:
    """Where a body's windows start (line numbers), and each container's count of line breaks."""

    body: Any
    """Kept so the containers' ``id()`` keys stay valid while the layout lives."""
    starts: list[int] = field(default_factory=list)
    lines: int = 0
    breaks: dict[int, int] = field(default_factory=dict)
    _children: dict[int, Any] = field(default_factory=dict)

    @property
    def count(self) -> int:
        """How many windows there are."""
        return len(self.starts)

    def span(self, n: int) -> tuple[int, int]:
        """Window ``n``'s lines: ``[first, end)``."""
        return window_span(self.starts, self.lines, n)

    def newlines(self, node: Any) -> int:
        """The line breaks inside a container's pretty form (0 for a scalar or an empty container)."""
        return self.breaks.get(id(node), 0)

    def window_of_line(self, line: int) -> int:
        return bisect.bisect_right(self.starts, line) - 1

    def line_of(self, pointer: str) -> int | None:
        """The line a JSON pointer's node starts on (its key's line for an object member); None if absent."""
        node, line = self.body, 0
        for raw in pointer.split("/")[1:] if pointer else ():
            offsets = self._offsets(node)
            key: Any = _unescape(raw)
            if isinstance(node, list):
                if not key.isdigit() or int(key) >= len(node):
                    return None
                key = int(key)
            elif not isinstance(node, dict) or key not in node:
                return None
            line += offsets[key]
            node = node[key]
        return line

    def _offsets(self, node: Any) -> Any:
        """Each child's first line relative to its container's first line (computed once per container)."""
        known = self._children.get(id(node))
        if known is not None:
            return known
        line = 1
        if isinstance(node, dict):
            offsets: Any = {}
            for key, item in node.items():
                offsets[key] = line
                line += self.newlines(item) + 1
        else:
            offsets = []
            for item in node:
                offsets.append(line)
                line += self.newlines(item) + 1
        self._children[id(node)] = offsets
        return offsets

    def render(self, n: int, marks: Mapping[str, Mark]) -> Rendered:
        """Window ``n`` highlighted, ``marks`` on its nodes."""
        start, end = self.span(n)
        return render(self.body, marks, start=start, end=end, newlines=self.newlines)

    def windows_of(self, anchors: Mapping[str, str]) -> dict[str, int]:
        """Card anchor -> the window holding the first line of that card's part (``anchors``: pointer -> anchor)."""
        out: dict[str, int] = {}
        for pointer, anchor in anchors.items():
            line = self.line_of(pointer)
            if line is None:
                continue
            n = self.window_of_line(line)
            if anchor not in out or n < out[anchor]:
                out[anchor] = n
        return out


class _Planner:
    """One pass over a value: counts line breaks per container and cuts windows by estimated size."""

    __slots__ = ("budget", "current", "filled", "layout", "line")

    def __init__(self, layout: Layout, budget: int) -> None:
        self.layout = layout
        self.budget = budget
        self.line = 0
        self.current = 0  # the estimated size of the line being measured
        self.filled = 0  # the estimated size of the window being filled

    def end_line(self, indent: int) -> None:
        size = self.current + LINE_BYTES
        if self.filled and self.filled + size > self.budget:
            self.layout.starts.append(self.line)
            self.filled = 0
        self.filled += size
        self.line += 1
        self.current = indent

    def value(self, value: Any, indent: int) -> None:
        if isinstance(value, dict | list):
            if not value:
                self.current += 2 + TOKEN_BYTES
                return
            first = self.line
            inner = indent + 2
            self.current += 1
            if isinstance(value, dict):
                for key, item in value.items():
                    self.end_line(inner)
                    self.current += len(key) + 4 + TOKEN_BYTES + 2 * QUOTE_BYTES
                    self.value(item, inner)
                    self.current += 1
            else:
                for item in value:
                    self.end_line(inner)
                    self.value(item, inner)
                    self.current += 1
            self.end_line(indent)
            self.current += 1
            self.layout.breaks[id(value)] = self.line - first
        elif isinstance(value, str):
            self.current += len(value) + 2 + TOKEN_BYTES + (2 + 2 * value.count('"')) * QUOTE_BYTES
        else:
            self.current += 8 + TOKEN_BYTES


def plan(body: Any, budget: int = WINDOW_BYTES) -> Layout:
    """The windows of ``body``'s pretty form, each at most about ``budget`` bytes of page."""
    layout = Layout(body, starts=[0])
    planner = _Planner(layout, budget)
    planner.value(body, 0)
    layout.lines = planner.line + 1
    return layout


PENDING_SHOWN = 12
"""Placeholders a response carries after a window: the last brings the next ones with its own window."""


@dataclass(frozen=True, slots=True)
class PendingWindow:
    """A window not sent yet: the placeholder that loads it when it scrolls into view (or when asked to)."""

    n: int
    element_id: str
    url: str
    first_line: int
    end_line: int
    brings_more: bool = False
    """Its response brings the placeholders of the windows after it too (``url`` asks for them)."""


@dataclass(frozen=True, slots=True)
class WindowedBody:
    """A body on a page: its first window highlighted, the others as placeholders, each card's window."""

    pane: str
    """The id of the ``<pre>`` that holds it; window ``n``'s element is ``<pane>-w<n>``."""
    first: Rendered
    pending: list[PendingWindow]
    """The placeholders of the next windows (``PENDING_SHOWN`` at most; the last brings the next ones)."""
    lines: int
    window_map: dict[str, int]
    """Card anchor -> window, for the cards the page shows (the rest are a request away)."""
    count: int = 1
    """How many windows the body has."""

    @property
    def complete(self) -> bool:
        """Whether the first window is the whole body."""
        return self.count <= 1


def window_id(pane: str, n: int) -> str:
    """The element id of window ``n`` of the body in ``pane``."""
    return f"{pane}-w{n}"


class Spans(Protocol):
    """A body's windows by line: a ``Layout``, or the plan a digest keeps of one."""

    @property
    def count(self) -> int: ...

    @property
    def lines(self) -> int: ...

    def span(self, n: int) -> tuple[int, int]: ...


def windowed(
    layout: Layout,
    pane: str,
    marks: Mapping[str, Mark],
    url_of: Callable[[int], str],
    window_map: dict[str, int] | None = None,
) -> WindowedBody:
    """The page's view of ``layout``: window 0 rendered, a placeholder with its URL for each later one."""
    return windowed_from(layout, pane, layout.render(0, marks), url_of, window_map)


def windowed_from(
    spans: Spans,
    pane: str,
    first: Rendered,
    url_of: Callable[[int], str],
    window_map: dict[str, int] | None = None,
    also: Iterable[int] = (),
) -> WindowedBody:
    """The page's view of a body whose window 0 is ``first``: placeholders for the next windows, for those holding
    the cards the page shows (``window_map``) and for ``also`` (a diff's listed changes), each run chained to the next.
    """
    shown = window_map or {}
    wanted = [*range(1, 1 + PENDING_SHOWN), *shown.values(), *also]
    return WindowedBody(pane, first, pending_windows(spans, pane, url_of, wanted), spans.lines, shown, spans.count)


def pending_after(
    spans: Spans, pane: str, url_of: Callable[[int], str], n: int, until: int | None = None
) -> list[PendingWindow]:
    """The placeholders a response carries after window ``n``: the next ``PENDING_SHOWN`` windows before ``until``
    (the next placeholder already on the page; the body's end by default), the last bringing the next ones."""
    end = spans.count if until is None else min(until, spans.count)
    return pending_windows(spans, pane, url_of, range(n + 1, min(end, n + 1 + PENDING_SHOWN)), end)


def pending_windows(
    spans: Spans, pane: str, url_of: Callable[[int], str], wanted: Iterable[int], until: int | None = None
) -> list[PendingWindow]:
    """Placeholders of the ``wanted`` windows (past the first, in the body), in order. The last of each run of
    consecutive ones brings, with its window, the placeholders up to the next run (or ``until``, the body's end by
    default), ``PENDING_SHOWN`` at a time: a body of any length costs a response the same."""
    numbers = sorted({k for k in wanted if 0 < k < spans.count})
    last = spans.count if until is None else until
    out = []
    for i, k in enumerate(numbers):
        following = numbers[i + 1] if i + 1 < len(numbers) else last
        more = k + 1 < following
        url = url_of(k) + (f"&then=1&until={following}" if more else "")  # a window's URL always has its query
        out.append(PendingWindow(k, window_id(pane, k), url, *spans.span(k), brings_more=more))
    return out
