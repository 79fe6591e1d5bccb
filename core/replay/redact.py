"""Remove the operator's key from anything a provider sent back, before it is stored or shown.

A provider may echo the key in its answer or its errors, and not always verbatim: URL-encoded in
a quoted URL, ``\\uXXXX``-escaped in a JSON string, inside base64 (an ``Authorization: Basic``
header echoed back), or cut short by a length limit. :class:`Redactor` finds all of these. It also
matches on a normalised reading of the text (case folded, HTML entities decoded, zero-width characters
dropped) any 8 characters in a row of the key, or of its hex, beyond the provider's public prefix
(``sk-proj-``, ``AIza``), and a masked echo (``sk-pr****ab12``: a start and an end of the key around stars).

Structured answers are redacted value by value after parsing (:meth:`Redactor.json`), never as
raw text, so the JSON keeps its shape and still parses; free text (an error line, a body that is
not JSON) is redacted whole before it is cut to length (:meth:`Redactor.clip`), so no fragment of
the key can straddle the cut.
"""

from __future__ import annotations

import base64
import functools
import html
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core.store.casefold import fold

REDACTED = "[redacted]"

MIN_KEY_CHARS = 8
"""Shorter keys are refused: a one-letter key occurs in every word, and its prefixes are not secret."""


def _hex(code: int, width: int) -> str:
    """``code`` in hex as a pattern matching either letter case."""
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{code:0{width}x}")


def _char_pattern(char: str) -> str:
    """One character of the key: literal, ``%XX``-encoded or ``\\uXXXX``-escaped."""
    code = ord(char)
    forms = [re.escape(char), rf"\\u{_hex(code, 4)}"]
    if code < 0x80:
        forms.append(f"%{_hex(code, 2)}")
    if not char.isalnum():
        forms.append(rf"\\{re.escape(char)}")  # JSON may escape any punctuation, ``\/`` in particular
    return "(?:" + "|".join(forms) + ")"


def _base64_fragments(key: bytes) -> list[str]:
    """The base64 characters that depend on the key alone, at each of the three byte alignments.

    Inside a longer base64 string the key starts at any offset modulo 3; the characters it shares
    with its neighbours differ per offset, the ones in between do not.
    """
    fragments: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + key).decode()
        start = -(-offset * 8 // 6)  # the first character made of key bits only
        end = (offset + len(key)) * 8 // 6  # past the last such character
        fragment = encoded[start:end]
        fragments += [fragment, fragment.replace("+", "-").replace("/", "_")]
    return fragments


PUBLIC_PREFIXES = ("sk-ant-api03-", "sk-ant-admin01-", "sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-", "AIza")
"""The starts of keys that providers print in their docs (OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, Google
``AIza``): the most a text may show of a key. Longest first."""
WINDOW = MIN_KEY_CHARS
"""Any run of this many characters of the key (past its public prefix) is the key, wherever it stands."""
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});")
_MASK = r"(?:\*{2,}|\u2026|\.{3,}|x{4,}|X{4,})"


def public_prefix(key: str) -> str:
    """The start of ``key`` its provider publishes (``sk-proj-``), or ''."""
    return next((p for p in PUBLIC_PREFIXES if key.startswith(p)), "")


def _windows(secret: str, skip: int) -> list[str]:
    """Every ``WINDOW``-character run of ``secret`` that reaches past its first ``skip`` characters."""
    first = max(0, skip - WINDOW + 1)
    return sorted({secret[i : i + WINDOW] for i in range(first, len(secret) - WINDOW + 1)}, key=len, reverse=True)


@functools.lru_cache(maxsize=8)
def _folded_pattern(key: str) -> re.Pattern[str] | None:
    """Windows of the key and of its hex, and its masked forms, as one pattern over the normalised text."""
    folded = fold(key)
    skip = len(public_prefix(key))
    windows = _windows(folded, skip) + _windows(key.encode().hex(), 2 * skip + WINDOW)
    starts = [re.escape(folded[:n]) for n in range(len(folded) - 1, 1, -1)]
    ends = [re.escape(folded[-n:]) for n in range(len(folded) - 1, 1, -1)]
    alternatives = [re.escape(w) for w in windows]
    if len(folded) >= WINDOW:
        alternatives.append(f"(?:{'|'.join(starts)}){_MASK}(?:{'|'.join(ends)})")
    # A lookahead finds overlapping matches: a key's windows overlap, and together they cover all of it.
    return re.compile(f"(?=({'|'.join(alternatives)}))") if alternatives else None


def _normalised(value: str) -> tuple[str, list[int] | None]:
    """``value`` case-folded, entities decoded, invisible characters dropped; and where each character came
    from (None when every character is where it was)."""
    if "&" not in value and not _INVISIBLE.search(value):
        return fold(value), None
    chars: list[str] = []
    origin: list[int] = []
    pos = 0
    for match in re.finditer(f"{_ENTITY.pattern}|{_INVISIBLE.pattern}", value):
        for i in range(pos, match.start()):
            chars.append(value[i])
            origin.append(i)
        token = match.group()
        if token.startswith("&"):
            for char in html.unescape(token):
                chars.append(char)
                origin.append(match.start())
        pos = match.end()
    for i in range(pos, len(value)):
        chars.append(value[i])
        origin.append(i)
    origin.append(len(value))
    return fold("".join(chars)), origin


def _redact_folded(value: str, pattern: re.Pattern[str] | None) -> str:
    """``value`` with every span whose normalised reading ``pattern`` matches replaced."""
    if pattern is None:
        return value
    normal, origin = _normalised(value)
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(normal):
        start, end = match.start(1), match.end(1)
        if origin is not None:
            last = origin[end - 1]
            start, end = origin[start], last + 1
            entity = _ENTITY.match(value, last)
            if entity is not None:
                end = max(end, entity.end())
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    if not spans:
        return value
    out, pos = [], 0
    for start, end in spans:
        out += [value[pos:start], REDACTED]
        pos = end
    out.append(value[pos:])
    return "".join(out)


@functools.lru_cache(maxsize=8)
def _key_pattern(key: str) -> re.Pattern[str]:
    """Every form of ``key`` as one pattern, built once per key: each send and each answer redacts with it."""
    alternatives = ["".join(_char_pattern(c) for c in key)]
    alternatives += [re.escape(f) for f in _base64_fragments(key.encode())]
    return re.compile("|".join(alternatives))


class Redactor:
    """Finds one key in its literal, URL-encoded, JSON-escaped and base64 forms, and a prefix at a cut."""

    def __init__(self, key: str) -> None:
        self._key = key
        self._pattern = _key_pattern(key)
        self._folded = _folded_pattern(key) if len(key) >= MIN_KEY_CHARS else None

    def text(self, value: str) -> str:
        """``value`` with every form of the key replaced, and a trailing prefix of 8+ characters too."""
        if not self._key:
            return value
        cleaned = _redact_folded(self._pattern.sub(REDACTED, value), self._folded)
        length = self._tail_length(cleaned)
        return cleaned[:-length] + REDACTED if length else cleaned

    def clip(self, value: str, limit: int) -> str:
        """Redact, then cut to ``limit`` characters; the cut can only shorten ``[redacted]``, never the key."""
        return self.text(self.text(value)[:limit])

    def json(self, value: Any) -> Any:
        """A copy of a parsed JSON value with every string (object keys included) redacted; the shape is kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        return value

    def _tail_length(self, value: str) -> int:
        """The length of the longest prefix of the key (8+ characters) that ``value`` ends with."""
        for length in range(len(self._key) - 1, MIN_KEY_CHARS - 1, -1):
            if value.endswith(self._key[:length]):
                return length
        return 0


HTTP_LOGGERS = (
    *(f"{pkg}.{part}" for pkg in ("httpcore", "httpcore2") for part in ("connection", "http11", "http2", "proxy")),
    *("httpx", "httpx2"),
)
"""Loggers that, at DEBUG, write the provider's response headers and bodies (httpcore's trace hooks); each send
adds its SDK's own logger (``Wire.logger``)."""
HTTP_PACKAGES = frozenset(name.split(".")[0] for name in HTTP_LOGGERS)


class _InFlightKeys(logging.Filter):
    """Redacts the keys of the sends in progress from every record of the HTTP loggers."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._redactors: dict[int, Redactor] = {}
        self._loggers_seen = 0
        self._packages = set(HTTP_PACKAGES)

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            redactors = list(self._redactors.values())
        if redactors:
            message = record.getMessage()
            for redactor in redactors:
                message = redactor.text(message)
            record.msg, record.args = message, None
        return True

    @contextmanager
    def keep_out(self, key: str, sdk_logger: str) -> Iterator[None]:
        token = object()
        with self._lock:
            loggers = logging.root.manager.loggerDict
            new_sdk = sdk_logger not in self._packages
            if new_sdk or len(loggers) != self._loggers_seen:  # loggers appear as SDKs load; addFilter keeps one
                self._packages.add(sdk_logger)
                known = [name for name in list(loggers) if name.split(".")[0] in self._packages]
                for name in {*HTTP_LOGGERS, sdk_logger, *known}:
                    logging.getLogger(name).addFilter(self)
                self._loggers_seen = len(loggers)
            self._redactors[id(token)] = Redactor(key)
        try:
            yield
        finally:
            with self._lock:
                del self._redactors[id(token)]


IN_FLIGHT = _InFlightKeys()
"""``with IN_FLIGHT.keep_out(key, sdk_logger):`` around a send keeps the key out of the HTTP libraries' debug logs."""
