"""What a value typed by a person (a form field, a query parameter, a command-line flag) may be, before any write.

The database sets the outer bounds: PostgreSQL's INTEGER is 32 bits and BIGINT 64, its text and JSONB
cannot hold U+0000, and a B-tree index entry ends at 2,704 bytes; SQLite's INTEGER is 64 bits. A rule
here is narrower than all of them, so a value it lets through is stored the same on both backends,
and one it refuses is one line naming the field (``MisuseError``: a 400 in the dashboard, exit 2 or 1
on the command line), never an error from the database.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.errors import MisuseError

MAX_INT32 = 2**31 - 1
"""PostgreSQL's INTEGER, the narrowest integer column."""

_DIGITS = 20
"""Longer digit strings are refused before ``int()`` reads them (64-bit integers have at most 20 digits)."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_MULTILINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")

N = TypeVar("N", int, float)


@dataclass(frozen=True, slots=True)
class _RangeRule(Generic[N]):
    """A number between ``low`` and ``high`` (both included), typed as text or given as a number."""

    name: str
    low: N
    high: N

    def check(self, value: N) -> N:
        """``value`` when it is in range, else MisuseError naming the field and its range."""
        raise NotImplementedError

    def read(self, text: str) -> N:
        """The number ``text`` (stripped, not blank) spells; MisuseError when it spells none."""
        raise NotImplementedError

    def parse(self, text: str) -> N | None:
        """The number a text field holds (None when it is blank); MisuseError when it is not one in range."""
        text = text.strip()
        return self.check(self.read(text)) if text else None


@dataclass(frozen=True, slots=True)
class IntRule(_RangeRule[int]):
    """A whole number between ``low`` and ``high`` (both included)."""

    def check(self, value: int) -> int:
        """``value`` when it is in range, else MisuseError naming the field and its range."""
        if not self.low <= value <= self.high:
            shown = str(value) if len(str(value)) <= _DIGITS else f"{str(value)[:_DIGITS]}..."
            raise MisuseError(f"{self.name} is between {self.low:,} and {self.high:,}, not {shown}")
        return value

    def read(self, text: str) -> int:
        """The whole number ``text`` spells (at most 20 digits and a sign)."""
        if len(text) > _DIGITS + 1 or not re.fullmatch(r"[+-]?[0-9]+", text):
            raise MisuseError(f"{self.name} must be a whole number between {self.low:,} and {self.high:,}")
        return int(text)


@dataclass(frozen=True, slots=True)
class FloatRule(_RangeRule[float]):
    """A finite number between ``low`` and ``high`` (both included)."""

    def check(self, value: float) -> float:
        """``value`` when it is finite and in range, else MisuseError naming the field and its range."""
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise MisuseError(self._refusal())
        return value

    def read(self, text: str) -> float:
        """The number ``text`` spells (its first 64 characters are read)."""
        try:
            return float(text[:64])
        except ValueError:
            raise MisuseError(self._refusal()) from None

    def _refusal(self) -> str:
        return f"{self.name} is a number between {self.low:g} and {self.high:g}"


@dataclass(frozen=True, slots=True)
class TextRule:
    """At most ``max_chars`` characters, no control character (no line break either unless ``multiline``),
    no lone surrogate (none can be encoded as UTF-8)."""

    name: str
    max_chars: int
    multiline: bool = False

    def check(self, value: str) -> str:
        """``value`` when it follows the rule, else MisuseError naming the field and what is wrong."""
        if len(value) > self.max_chars:
            raise MisuseError(f"{self.name} is {len(value):,} characters long; at most {self.max_chars:,}")
        control = _CONTROL_MULTILINE if self.multiline else _CONTROL
        if control.search(value):
            raise MisuseError(f"{self.name} contains a control character (U+0000 to U+001F, U+007F to U+009F)")
        if _SURROGATE.search(value):
            raise MisuseError(f"{self.name} is not valid Unicode text (a lone surrogate)")
        return value


ID = TextRule("an id", 512)
"""A conversation, message or run id typed into a form or a flag (``core.store.MAX_ID_CHARS``)."""
PROVIDER = TextRule("the provider", 40)
MODEL = TextRule("the model", 200)
"""Model names of every provider are a few dozen characters; an endpoint id (Doubao's ``ep-...``) too."""
IDEMPOTENCY_KEY = TextRule("the idempotency key", 128)
SUITE_NAME = TextRule("the suite name", 200)
SEARCH = TextRule("the search", 256)

MAX_STEPS = IntRule("max steps", 1, 10_000)
MAX_COST = FloatRule("max cost", 0.0, 1_000_000.0)
"""In US dollars."""
OFFSET = IntRule("offset", 0, MAX_INT32)
LIMIT = IntRule("limit", 1, MAX_INT32)
