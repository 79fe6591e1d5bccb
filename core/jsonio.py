"""JSON text in and out, exactly: orjson for speed, the standard library where orjson would lose data.

orjson reads an integer past its 64-bit range as a float (``123456789012345678901234567890``
comes back as ``1.2345678901234568e+29``) and refuses to write one, and it refuses to write
more than 254 levels of nesting. A trace may hold either (a 128-bit id in an unknown key, a
deep history), and the format promises that every value comes back equal. So:

* :func:`loads` parses with orjson; when the text holds a run of 19 or more digits (the
  shortest integer orjson may not hold exactly), the standard library parses it again and
  its exact value is the one returned (orjson's pass keeps orjson's refusals and errors);
* :func:`dumps` writes with orjson and hands what it refuses to the standard library.

Looking for the digit run costs a translate and a substring search, about a sixth of the parse.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# Digits to "0", every other byte to " ": a long integer becomes a run of "0" that a substring search finds.
_DIGITS_TO_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
# 19 digits: orjson holds every integer of [-2**63, 2**64 - 1] exactly, and some of 19 digits fall outside.
_LONG_DIGIT_RUN = b"0" * 19


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; integers of any size come back as exact ints.

    Raises ``orjson.JSONDecodeError`` (a ``ValueError``) on invalid JSON, whichever parser ran;
    ``RecursionError`` is turned into that error too.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)  # bytes: no copy
    if not _has_long_digit_run(raw):
        return orjson.loads(raw)
    value = orjson.loads(raw)  # what is valid JSON, and the error when it is not, stay orjson's
    try:
        return json.loads(raw)
    except RecursionError:  # nesting orjson takes but the stdlib's recursion cannot: orjson's reading stands
        return value


_SCAN_BYTES = 1024 * 1024
"""The digit run is looked for a slice of this size at a time: a long trace's text is not copied whole to find it."""


def _has_long_digit_run(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of ``_LONG_DIGIT_RUN`` digits (slices overlap so a run across two is found)."""
    overlap = len(_LONG_DIGIT_RUN) - 1
    for start in range(0, max(len(raw), 1), _SCAN_BYTES):
        zeros = raw[start : start + _SCAN_BYTES + overlap].translate(_DIGITS_TO_ZERO)
        # Counting first is cheaper than the substring search on the short texts of the hot path (tool arguments).
        if zeros.count(0x30) >= len(_LONG_DIGIT_RUN) and _LONG_DIGIT_RUN in zeros:
            return True
    return False


def dumps(value: Any, *, sort_keys: bool = False, indent: bool = False) -> bytes:
    """Compact UTF-8 JSON of ``value`` (``indent``: two spaces per level, for a reader)."""
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(value, option=option)
    except TypeError as exc:
        message = str(exc)
        if "Recursion" not in message and "64-bit" not in message:
            raise
    if indent:
        try:
            return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=sort_keys).encode()
        except RecursionError:  # the indenting encoder is Python's, a few frames a level: the C one goes deeper
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys).encode()
