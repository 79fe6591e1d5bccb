"""What the CLI prints to a terminal: every value from a trace goes through :func:`printable`.

A trace is untrusted, and a terminal obeys what it prints: OSC 52 writes the clipboard, OSC 0 sets
the window title, ``CSI 2J`` clears the screen, and ``\\r\\x1b[K`` erases the line so far, which
lets a message id overwrite a ``check`` finding with a forged one. Bidirectional overrides reorder
what is shown (Trojan Source). Each such character is printed as a visible escape instead.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime
from typing import TextIO

# C0 controls and DEL, C1 controls, Unicode's directional formatting characters (UAX #9) and the
# Unicode line and paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(value: object, *, multiline: bool = False) -> str:
    """``str(value)`` with control, C1 and bidi characters shown as escapes; newlines kept when ``multiline``.

    A one-line value (an id, a title, an error line) keeps no line break, so it cannot start a
    line of its own; a multi-line text (a reply) keeps its newlines and tabs, nothing else.
    """
    text = str(value)

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        if multiline and char in ("\n", "\t"):
            return char
        return _escape(char)

    return _UNSAFE.sub(replace, text)


def echo(value: object, *, file: TextIO | None = None, multiline: bool = False) -> None:
    """Print one line (or a multi-line text) made printable: the CLI's only way to show trace values."""
    print(printable(value, multiline=multiline), file=sys.stdout if file is None else file)


def cell(value: object, width: int) -> str:
    """One table cell: made printable, cut to ``width`` with an ellipsis when longer, then padded."""
    text = printable(value)
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.ljust(width)


def timestamp(ms: int | None) -> str:
    """A stored millisecond stamp as local ``YYYY-MM-DD HH:MM``; empty when there is none."""
    if ms is None:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):  # a stamp far outside what the clock can show
        return str(ms)
