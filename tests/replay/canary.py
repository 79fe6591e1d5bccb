"""Searching for the canary key: every row of a database as text, and the forms a leak of the key could take."""

from __future__ import annotations

import base64

from sqlalchemy import inspect, select, table, text

from core.store import Store
from tests.replay.conftest import CANARY_KEY

FORMS = {
    "prefix": CANARY_KEY[:5],
    "base64": base64.b64encode(CANARY_KEY.encode()).decode()[4:16],
    "json-escaped": "\\u0073\\u006b",
}


def dump_database(store: Store) -> str:
    """Every row of every table (FTS shadow tables included), as text."""
    out: list[str] = []
    with store.engine.connect() as conn:
        names = inspect(conn).get_table_names()
        if conn.dialect.name == "sqlite":
            names += [r[0] for r in conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))]
        for name in sorted(set(names)):
            out += [repr(tuple(row)) for row in conn.execute(select(text("*")).select_from(table(name)))]
    assert len(out) > 10
    return "\n".join(out)


def assert_nowhere(places: dict[str, str]) -> None:
    """The key, whole or in any of its forms, is in none of these texts (named by where they were gathered)."""
    for where, haystack in places.items():
        assert CANARY_KEY not in haystack, f"the key leaked into the {where}"
        for form, fragment in FORMS.items():
            assert fragment not in haystack, f"the key leaked into the {where}, {form}"
