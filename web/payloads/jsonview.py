"""A JSON value as highlighted tokens for a template: pretty-printed server-side, every token escaped there.

The template writes each token as a ``<span>`` through autoescaping (``_json.html``);
nothing here builds HTML. The tokens' text, joined, is exactly
``json.dumps(value, indent=2, ensure_ascii=False)`` with its secrets masked as the API
masks them (``web.masking``), so the page's text is the body the API gives and the copy
button copies that JSON.

Nodes at chosen JSON pointers are wrapped in ``open``/``close`` tokens that carry what
the page needs to link them: the anchor of the card that became that node (from the
provenance map) and a diff mark. An object member is wrapped with its key, an array
item on its own. A body too large to show in full stops at ``max_chars`` (every open
span is closed) and says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from core.providers.jsonable import pointer_token
from web import masking

TokenKind = Literal["p", "k", "s", "x", "n", "b", "z", "open", "close"]
"""punctuation and whitespace, key, string, a masked secret inside a string (web.masking), number, boolean,
null; and the wrapper of a marked node."""

MAX_RENDER_CHARS = 1_500_000
"""Past this many characters a body is cut (about 5 MB of HTML once highlighted); the raw JSON stays available."""


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
    """A rendered value: its tokens, whether it was cut, and its full size in characters."""

    tokens: list[Token] = field(default_factory=list)
    truncated: bool = False
    chars: int = 0
    shown_chars: int = 0

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


class _Writer:
    __slots__ = ("budget", "chars", "marks", "open_marks", "out", "stopped")

    def __init__(self, marks: Mapping[str, Mark], budget: int) -> None:
        self.out: list[Token] = []
        self.marks = marks
        self.budget = budget
        self.chars = 0
        self.stopped = False
        self.open_marks = 0

    def emit(self, kind: TokenKind, text: str) -> None:
        if self.stopped:
            return
        if self.chars + len(text) > self.budget:
            self.stopped = True
            return
        self.chars += len(text)
        out = self.out
        if kind == "p" and out and out[-1].kind == "p":
            out[-1] = Token("p", out[-1].text + text)
        else:
            out.append(Token(kind, text))

    def string(self, value: str) -> None:
        """A string token; a secret inside it is its own masked token, so the page can reveal it alone."""
        pieces = masking.segments(value)
        if len(pieces) == 1 and pieces[0].secret is None:
            self.emit("s", dump_scalar(value))
            return
        self.emit("s", '"')
        for piece in pieces:
            if piece.secret is None:
                self.emit("s", dump_scalar(piece.text)[1:-1])
            elif not self.stopped and self.chars + len(piece.text) <= self.budget:
                self.chars += len(piece.text)
                self.out.append(Token("x", piece.text, secret=piece.secret.digest))
            else:
                self.stopped = True
        self.emit("s", '"')

    def open(self, pointer: str) -> bool:
        mark = self.marks.get(pointer)
        if mark is None or self.stopped:
            return False
        self.out.append(Token("open", pointer=pointer, mark=mark))
        self.open_marks += 1
        return True

    def close(self) -> None:
        self.out.append(Token("close"))
        self.open_marks -= 1

    def value(self, value: Any, pointer: str, indent: str) -> None:
        if self.stopped:
            return
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
                child = f"{pointer}/{pointer_token(key)}"
                opened = self.open(child)
                self.emit("k", dump_scalar(str(key)))
                self.emit("p", ": ")
                if isinstance(item, str) and key in masking.ID_KEYS:
                    self.emit("s", dump_scalar(item))  # an id a client sends back stays whole, as in the API
                else:
                    self.value(item, child, inner)
                if opened:
                    self.close()
                if self.stopped:
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
                child = f"{pointer}/{i}"
                opened = self.open(child)
                self.value(item, child, inner)
                if opened:
                    self.close()
                if self.stopped:
                    return
            self.emit("p", "\n" + indent + "]")
        elif isinstance(value, str):
            self.string(value)
        elif value is None:
            self.emit("z", "null")
        elif isinstance(value, bool):
            self.emit("b", "true" if value else "false")
        else:
            self.emit("n", dump_scalar(value))


def render(value: Any, marks: Mapping[str, Mark] | None = None, *, max_chars: int = MAX_RENDER_CHARS) -> Rendered:
    """``value`` as tokens, nodes at the pointers of ``marks`` wrapped; cut after ``max_chars`` characters."""
    writer = _Writer(marks or {}, max_chars)
    opened = writer.open("")
    writer.value(value, "", "")
    if opened:
        writer.close()
    while writer.open_marks > 0:  # a cut body: close what is still open, the page stays well formed
        writer.close()
    chars = writer.chars if not writer.stopped else len(json.dumps(value, indent=2, ensure_ascii=False))
    return Rendered(tokens=writer.out, truncated=writer.stopped, chars=chars, shown_chars=writer.chars)


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
    depth = 0
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
                depth = min((len(piece) - len(piece.lstrip(" "))) // 2, MAX_DEPTH_CLASS)
                current = [_reopened(t) for t in stack]
                text = piece + ("\n" if i < len(pieces) - 1 else "")
                if text:
                    current.append(Token("p", text))
        else:
            current.append(token)
    out.append(Line(depth, current))
    return out


def _reopened(token: Token) -> Token:
    """An open token again on a later line: the same mark without its element id (ids are unique)."""
    mark = token.mark._replace(node_id=None) if token.mark is not None else None
    return token._replace(mark=mark)


def pretty(value: Any) -> str:
    """The text the tokens of ``value`` join to."""
    return json.dumps(masking.mask_value(value), indent=2, ensure_ascii=False)
