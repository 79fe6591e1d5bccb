"""JSON text for the store's columns and exports: orjson, with the standard library past orjson's depth.

orjson refuses to serialise more than 254 levels of nesting, while the reader accepts
up to 1024; whatever the reader hands over must never crash a write or an export
with a TypeError, so the standard library encoder takes over for those rare bodies.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


class RawJSON(str):
    """JSON text already serialised (by pydantic's ``dump_json``, say): the column stores it as it is."""

    __slots__ = ()


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact UTF-8 JSON of ``value``."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError as exc:
        if "Recursion" not in str(exc):
            raise
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys).encode()


def dumps_text(value: Any) -> str:
    """``dumps`` as a str (what SQLAlchemy's JSON columns expect from their serializer); RawJSON passes through."""
    if isinstance(value, RawJSON):
        return str.__str__(value)
    return dumps(value).decode()
