"""Remove the operator's key from anything a provider sent back, before it is stored or shown.

A provider may echo the key in its answer or its errors, and not always verbatim: URL-encoded in
a quoted URL, ``\\uXXXX``-escaped in a JSON string, inside base64 (an ``Authorization: Basic``
header echoed back), or cut short by a length limit. :class:`Redactor` finds all of these.

Structured answers are redacted value by value after parsing (:meth:`Redactor.json`), never as
raw text, so the JSON keeps its shape and still parses; free text (an error line, a body that is
not JSON) is redacted whole before it is cut to length (:meth:`Redactor.clip`), so no fragment of
the key can straddle the cut.
"""

from __future__ import annotations

import base64
import functools
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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

    def text(self, value: str) -> str:
        """``value`` with every form of the key replaced, and a trailing prefix of 8+ characters too."""
        if not self._key:
            return value
        cleaned = self._pattern.sub(REDACTED, value)
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
