"""Which conversations are live: they received spans over OTLP within the last ``LIVE_WINDOW_MS``."""

from __future__ import annotations

from collections.abc import Iterable

from core.messages.base import now_ms
from core.store import Store
from core.store import ingest as tables
from core.store.engine import read_transaction

LIVE_WINDOW_MS = 120_000
"""A conversation that received no span for two minutes is no longer shown as live (an agent between turns)."""


def live_among(store: Store, conversation_ids: Iterable[str], *, now: int | None = None) -> frozenset[str]:
    """Those of these conversations still receiving spans."""
    ids = list(conversation_ids)
    if not ids:
        return frozenset()
    since = (now_ms() if now is None else now) - LIVE_WINDOW_MS
    with read_transaction(store.engine) as conn:
        return frozenset(tables.live_since(conn, ids, since))
