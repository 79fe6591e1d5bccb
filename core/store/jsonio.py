"""JSON text for the store's columns and exports (exact: see :mod:`core.jsonio`)."""

from __future__ import annotations

from typing import Any

from core.jsonio import dumps

__all__ = ["RawJSON", "dumps", "dumps_text"]


class RawJSON(str):
    """JSON text already serialised (by pydantic's ``dump_json``, say): the column stores it as it is."""

    __slots__ = ()


def dumps_text(value: Any) -> str:
    """``dumps`` as a str (what SQLAlchemy's JSON columns expect from their serializer); RawJSON passes through."""
    if isinstance(value, RawJSON):
        return str.__str__(value)
    return dumps(value).decode()
