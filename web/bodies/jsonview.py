"""A JSON value as highlighted tokens for a template: pretty-printed server-side, every token escaped there.

The template writes each token as a ``<span>`` through autoescaping (``_json.html``);
nothing here builds HTML. The tokens' text, joined, is exactly
``json.dumps(value, indent=2, ensure_ascii=False)`` with its secrets masked as the API
masks them (``web.masking``), so the page's text is the body the API gives and the copy
button copies that JSON.

Nodes at chosen JSON pointers are wrapped in ``open``/``close`` tokens that carry what
the page needs to link them: the anchor of the card that became that node (from the
provenance map) and a diff mark. An object member is wrapped with its key, an array
item on its own. A range of lines (a window, ``web.bodies.windows``) can be rendered
alone: subtrees wholly before it are skipped by their line counts, so a window late in
a large body costs about what the first one does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from core.providers.jsonable import pointer_token
from web import masking

TokenKind = Literal["p", "k", "s", "x", "n", "b", "z", "open", "close"]
"""punctuation and whitespace, key, string, a masked secret inside a string (web.masking), number, boolean,
null; and the wrapper of a marked node."""


class Mark(NamedTuple):
    """How a node is marked: the card it came from (an anchor), a diff op, an element id, a change number."""

    card: str | None = None
    op: str | None = None
    node_id: str | None = None
    change: int | None = None


class Token(NamedTuple):
    """One piece of the rendered JSON; ``mark`` only on ``open``, ``secret`` (a digest) only on ``x``."""

    kind: TokenKind
    text: str = ""
    pointer: str = ""
    mark: Mark | None = None
    secret: str = ""


@dataclass(slots=True)
class Rendered:
    """Rendered lines of a value: their tokens and the depth of the first of them."""

    tokens: list[Token] = field(default_factory=list)
    depth: int = 0

    @property
    def lines(self) -> list[Line]:
        """The tokens line by line, for a page that wraps each line at its own indentation."""
        return lines(self)


def dump_scalar(value: Any) -> str:
    """A scalar exactly as ``json.dumps(..., ensure_ascii=False)`` writes it (escaped when not UTF-8-safe)."""
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the page must stay valid UTF-8
            return json.dumps(value)
    return text


def _depth_of(indentation: str) -> int:
    return min((len(indentation) - len(indentation.lstrip(" "))) // 2, MAX_DEPTH_CLASS)


def _no_count(_: Any) -> int:
    raise AssertionError("a full render skips nothing")


class _Writer:
    """Writes the tokens of lines ``[start, end)``; ``newlines(node)`` counts a container's line breaks."""

    __slots__ = ("depth", "done", "emitted_open", "end", "line", "marks", "newlines", "out", "stack", "start")

    def __init__(self, marks: Mapping[str, Mark], start: int, end: int, newlines: Callable[[Any], int]) -> None:
        self.out: list[Token] = []
        self.marks = marks
        self.start = start
        self.end = end
        self.newlines = newlines
        self.line = 0
        self.depth = 0
        self.done = False
        self.stack: list[Token] = []
        self.emitted_open = 0

    @property
    def visible(self) -> bool:
        return self.start <= self.line < self.end

    def _append(self, kind: TokenKind, text: str) -> None:
        out = self.out
        if kind == "p" and out and out[-1].kind == "p":
            out[-1] = Token("p", out[-1].text + text)
        else:
            out.append(Token(kind, text))

    def emit(self, kind: TokenKind, text: str) -> None:
        if kind != "p" or "\n" not in text:
            if self.visible:
                self._append(kind, text)
            return
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                self.line += 1
                if self.line >= self.end:
                    self.done = True
                    return
                if self.line == self.start:  # the window opens: the marks still open start again here
                    self.depth = _depth_of(piece)
                    for token in self.stack:
                        self.out.append(_reopened(token))
                        self.emitted_open += 1
            if self.visible:
                self._append("p", piece + ("\n" if i < len(pieces) - 1 else ""))

    def string(self, value: str) -> None:
        """A string token; a secret inside it is its own masked token, so the page can reveal it alone."""
        if not self.visible:
            return
        pieces = masking.segments(value)
        if len(pieces) == 1 and pieces[0].secret is None:
            self._append("s", dump_scalar(value))
            return
        self._append("s", '"')
        for piece in pieces:
            if piece.secret is None:
                self._append("s", dump_scalar(piece.text)[1:-1])
            else:
                self.out.append(Token("x", piece.text, secret=piece.secret.digest))
        self._append("s", '"')

    def open(self, pointer: str) -> bool:
        mark = self.marks.get(pointer)
        if mark is None:
            return False
        token = Token("open", pointer=pointer, mark=mark)
        self.stack.append(token)
        if self.visible:
            self.out.append(token)
            self.emitted_open += 1
        return True

    def close(self) -> None:
        self.stack.pop()
        if self.visible and self.emitted_open:
            self.out.append(Token("close"))
            self.emitted_open -= 1

    def skips(self, item: Any) -> bool:
        """Whether ``item``, starting on the current line, ends before the window (then only its lines count)."""
        if self.line >= self.start or not isinstance(item, dict | list) or not item:
            return False
        span = self.newlines(item)
        if self.line + span >= self.start:
            return False
        self.line += span
        return True

    def value(self, value: Any, pointer: str, indent: str) -> None:
        if isinstance(value, dict):
            if not value:
                self.emit("p", "{}")
                return
            inner = indent + "  "
            self.emit("p", "{")
            first = True
            for key, item in value.items():
                self.emit("p", ("\n" if first else ",\n") + inner)
                first = False
                if self.done:
                    return
                if self.skips(item):
                    continue
                child = f"{pointer}/{pointer_token(key)}"
                opened = self.open(child)
                if self.visible:
                    self._append("k", dump_scalar(str(key)))
                    self._append("p", ": ")
                if isinstance(item, str) and key in masking.ID_KEYS:
                    if self.visible:  # an id a client sends back stays whole, as in the API
                        self._append("s", dump_scalar(item))
                else:
                    self.value(item, child, inner)
                if opened:
                    self.close()
                if self.done:
                    return
            self.emit("p", "\n" + indent + "}")
        elif isinstance(value, list):
            if not value:
                self.emit("p", "[]")
                return
            inner = indent + "  "
            self.emit("p", "[")
            for i, item in enumerate(value):
                self.emit("p", ("\n" if i == 0 else ",\n") + inner)
                if self.done:
                    return
                if self.skips(item):
                    continue
                child = f"{pointer}/{i}"
                opened = self.open(child)
                self.value(item, child, inner)
                if opened:
                    self.close()
                if self.done:
                    return
            self.emit("p", "\n" + indent + "]")
        elif not self.visible:
            return
        elif isinstance(value, str):
            self.string(value)
        elif value is None:
            self._append("z", "null")
        elif isinstance(value, bool):
            self._append("b", "true" if value else "false")
        else:
            self._append("n", dump_scalar(value))


def render(
    value: Any,
    marks: Mapping[str, Mark] | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    newlines: Callable[[Any], int] = _no_count,
) -> Rendered:
    """Lines ``[start, end)`` of ``value`` pretty-printed (all of them by default), nodes at ``marks`` wrapped.

    A window that starts past line 0 needs ``newlines(node)``: the line breaks inside a container, to skip it.
    """
    writer = _Writer(marks or {}, start, end if end is not None else 1 << 62, newlines)
    opened = writer.open("")
    writer.value(value, "", "")
    if opened:
        writer.close()
    writer.out.extend(Token("close") for _ in range(writer.emitted_open))  # a window ends inside open marks
    return Rendered(tokens=writer.out, depth=writer.depth)


MAX_DEPTH_CLASS = 20
"""Lines nested deeper than this wrap at this depth's indentation (the stylesheet has a class per depth)."""


class Line(NamedTuple):
    """One line of the rendered JSON: its nesting depth (indentation / 2) and its tokens, marks balanced.

    A marked node that spans lines is closed at each line's end and opened again on the next (its
    element id only on its first line), so each line can be a block that wraps at its own indentation.
    """

    depth: int
    tokens: list[Token]


def lines(rendered: Rendered) -> list[Line]:
    """The tokens of ``rendered`` cut into lines; joined, their text is the tokens' text (newlines included)."""
    out: list[Line] = []
    current: list[Token] = []
    stack: list[Token] = []
    depth = rendered.depth
    for token in rendered.tokens:
        if token.kind == "open":
            stack.append(token)
            current.append(token)
        elif token.kind == "close":
            stack.pop()
            current.append(token)
        elif token.kind == "p" and "\n" in token.text:
            pieces = token.text.split("\n")
            for i, piece in enumerate(pieces):
                if i == 0:
                    current.append(Token("p", piece + "\n"))
                    continue
                current.extend(Token("close") for _ in stack)
                out.append(Line(depth, current))
                depth = _depth_of(piece)
                current = [_reopened(t) for t in stack]
                text = piece + ("\n" if i < len(pieces) - 1 else "")
                if text:
                    current.append(Token("p", text))
        else:
            current.append(token)
    if not out or any(t.text for t in current):  # a window that ends with its newline has no line after it
        out.append(Line(depth, current))
    return out


def _reopened(token: Token) -> Token:
    """An open token again on a later line: the same mark without its element id (ids are unique)."""
    mark = token.mark._replace(node_id=None) if token.mark is not None else None
    return token._replace(mark=mark)


def pretty(value: Any) -> str:
    """The text the tokens of ``value`` join to."""
    return json.dumps(masking.mask_value(value), indent=2, ensure_ascii=False)
