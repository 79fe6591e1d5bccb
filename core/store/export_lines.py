"""Every stored record an export holds beside the messages: one JSONL line ``{"traceloupe_<kind>": {...}}`` each.

A kind is one table (``KINDS``). Its line holds every column of a row but the row's own ``id``, and
each foreign key as the natural key of the row it points at (``conversation_pk`` is written as
``conversation_id``, ``step_run_pk`` as ``step_run_id``), so a column added to a table is exported
and imported with no change here. A table that is not a kind is derived from the messages or is a
process's working state, never a record (``NOT_EXPORTED``); a test holds every table to one list.

Lines are written kind after kind, in ``KINDS`` order (what a line points at comes first), each
kind in the order of its rows' times, with sorted keys: the same store gives the same bytes on
both backends (PostgreSQL's JSONB keeps no key order). ``core.store.import_lines`` takes them back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Connection, Table, select

from core.reader import STORE_LINE_PREFIX
from core.store.tables import (
    REQUEST_CONTEXTS,
    RUNS,
    STEP_RUNS,
    STEPS,
    SUITE_MEMBERS,
    SUITE_RUN_ITEMS,
    SUITE_RUNS,
    SUITES,
)


@dataclass(frozen=True, slots=True)
class Reference:
    """A foreign key written as the natural key of the row it points at."""

    column: str
    """The row's foreign key column (``conversation_pk``)."""
    field: str
    """The line's field in its place (``conversation_id``)."""
    key: str
    """The pointed-at table's column the field holds (``conversation_id``)."""
    label: str
    """What the pointed-at row is called in an error (``conversation``)."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of export line: its table, what names one record, and how its foreign keys are written."""

    name: str
    """The line's key is ``traceloupe_<name>``."""
    label: str
    table: Table
    identity: tuple[str, ...]
    """The line fields that name one record (unique in the store)."""
    references: tuple[Reference, ...] = ()
    order: tuple[str, ...] = ()
    """The columns that order the export (then the row id), after the parent's order."""
    parent: str | None = None
    """The reference field of the record this one belongs to: rows follow their parents' order."""
    per_conversation: bool = False
    """Whether ``export --conversation`` writes this kind (its rows belong to one conversation)."""
    narrower: Callable[[], dict[str, Any]] | None = None
    """Field types narrower than their columns' (a status's closed set), by field: imported when first needed."""
    counted: bool = False
    """Whether a record stored counts on its conversation's list row (a run does)."""
    reader: Callable[[], Callable[[dict[str, Any]], dict[str, Any]]] | None = None
    """Reads a checked line into the form it is stored in, or raises InputError whose ``path`` is the field
    inside the line (a request context's tools in any shape made neutral): imported when first needed."""
    user_message: str | None = None
    """The field that, when set, must name a user message of the record's conversation (a context's turn)."""
    trace: bool = False
    """Whether the record is part of the trace itself: written beside the messages even by ``--no-runs``."""

    @property
    def key(self) -> str:
        return f"{STORE_LINE_PREFIX}{self.name}"

    def reference(self, column: str) -> Reference | None:
        """The reference written in place of a foreign key column, None for another column."""
        return next((r for r in self.references if r.column == column), None)

    def reference_of_field(self, field: str) -> Reference | None:
        """The reference a line field holds, None for a field that is a column of its own."""
        return next((r for r in self.references if r.field == field), None)


_CONVERSATION = Reference("conversation_pk", "conversation_id", "conversation_id", "conversation")
_SUITE = Reference("suite_pk", "suite", "name", "suite")


def _run_types() -> dict[str, Any]:
    from core.store.views import RunStatus

    return {"status": RunStatus}


def _step_run_types() -> dict[str, Any]:
    from core.providers import ToolsSource
    from core.store.step_runs import StepRunStatus

    # A tool choice is a word (``auto``) or an object naming the tool; a JSON column alone takes only the object.
    return {"status": StepRunStatus, "tools_source": ToolsSource, "tools": list[dict[str, Any]],
            "tool_choice": str | dict[str, Any]}  # fmt: skip


def _step_types() -> dict[str, Any]:
    from core.store.step_runs import StepVerdict

    return {"verdict": StepVerdict}


def _suite_types() -> dict[str, Any]:
    from core.store.suite_views import Mode, Outcome, SuiteRunStatus

    return {"mode": Mode, "status": SuiteRunStatus, "outcome": Outcome}


def _request_types() -> dict[str, Any]:
    return {"tools": list[Any], "tool_choice": str | dict[str, Any], "params": dict[str, Any]}


def _request_reader() -> Callable[[dict[str, Any]], dict[str, Any]]:
    from core.request_context import read_request, request_json  # here: it imports the providers

    return lambda fields: request_json(read_request(fields))


KINDS: tuple[Kind, ...] = (
    Kind(
        "request", "request context", REQUEST_CONTEXTS, ("conversation_id", "turn"), (_CONVERSATION,),
        ("conversation_pk",), per_conversation=True, narrower=_request_types, reader=_request_reader,
        user_message="turn", trace=True,
    ),
    Kind(
        "run", "run", RUNS, ("run_id",), (_CONVERSATION,), ("started_at",),
        per_conversation=True, narrower=_run_types, counted=True,
    ),
    Kind(
        "step_run", "step run", STEP_RUNS, ("run_id",), (_CONVERSATION,), ("started_at",),
        per_conversation=True, narrower=_step_run_types, counted=True,
    ),
    Kind(
        "step", "step", STEPS, ("step_run_id", "position"),
        (Reference("step_run_pk", "step_run_id", "run_id", "step run"),), ("position",),
        parent="step_run_id", per_conversation=True, narrower=_step_types,
    ),
    Kind("suite", "suite", SUITES, ("name",), (), ("created_at",)),
    Kind(
        "suite_member", "suite member", SUITE_MEMBERS, ("suite", "position"),
        (_SUITE, _CONVERSATION), ("position",), parent="suite",
    ),
    Kind(
        "suite_run", "suite run", SUITE_RUNS, ("run_id",),
        (_SUITE, Reference("baseline_pk", "baseline_run_id", "run_id", "suite run")), ("created_at",),
        narrower=_suite_types,
    ),
    Kind(
        "suite_run_item", "suite run item", SUITE_RUN_ITEMS, ("suite_run_id", "conversation_id"),
        (Reference("suite_run_pk", "suite_run_id", "run_id", "suite run"), _CONVERSATION), ("position",),
        parent="suite_run_id", narrower=_suite_types,
    ),
)  # fmt: skip
"""Every kind, in the order an export writes them and an import stores them: what a line points at comes first."""

BY_KEY = {kind.key: kind for kind in KINDS}
BY_TABLE = {kind.table.name: kind for kind in KINDS}

NOT_EXPORTED: dict[str, str] = {
    "conversations": "figures derived from the messages, runs and step runs",
    "messages": "written as the messages themselves, before every other line",
    "message_outlines": "derived from the messages",
    "message_texts": "derived from the messages",
    "conversation_kinds": "derived from the messages",
    "search_chunks": "PostgreSQL's search index, derived from the messages",
    "message_fts": "SQLite's search index, derived from the messages",
    "message_search_pieces": "a long message's searchable text after its first piece, derived from the messages",
    "search_piece_fts": "SQLite's search index of those pieces, derived from the messages",
    "conversation_fts": "SQLite's search index of conversation ids and titles, derived from the conversations",
    "message_grams": "SQLite's index of short searches, derived from the messages",
    "conversation_grams": "the index of short searches in ids and titles, derived from the conversations",
    "digests": "a cache, derived from the messages",
    "digest_parts": "a cache, derived from the messages",
    "jobs": "the queue's work in flight, not a record",
    "app_secrets": "the dashboard's signing key: never leaves the store",
    "api_keys": "key hashes: credentials never leave the store",
    "users": "accounts and their password hashes: the server's, not the traces', and credentials never leave",
    "sessions": "logins in progress: credentials never leave the store",
    "audit_events": "the server's record of who did what, not part of the traces (traceloupe audit --json)",
    "ingest_batches": "spans received over OTLP: exported as the conversations they were assembled into",
    "ingest_spans": "an index of the received batches",
    "ingest_links": "derived from the received spans",
    "ingest_outputs": "derived from the received spans",
    "live_conversations": "when spans last arrived: the state of a live feed, not a record",
}
"""Tables an export leaves out, and why."""


def line_columns(table: Table) -> list[Column[Any]]:
    """The columns a line holds (foreign keys in their reference's place): every one but the row id."""
    return [c for c in table.c if not (c.name == "id" and c.primary_key)]


def target_of(kind: Kind, reference: Reference) -> Table:
    """The table a reference points at, read from the foreign key."""
    (fk,) = kind.table.c[reference.column].foreign_keys
    table = fk.column.table
    assert isinstance(table, Table)
    return table


# -- export --------------------------------------------------------------


@functools.cache
def line_select(kind: Kind) -> tuple[Any, dict[str, Any]]:
    """The kind's rows as line fields (references joined to their natural keys), and the joined aliases.

    Made once per kind: building the joins and labels costs more than running the query on a small conversation,
    and a statement is never changed in place (``where`` and ``order_by`` make new ones)."""
    t = kind.table
    joined: Any = t
    aliases: dict[str, Any] = {}
    for ref in kind.references:
        alias = target_of(kind, ref).alias(f"ref_{ref.field}")
        joined = joined.outerjoin(alias, alias.c.id == t.c[ref.column])
        aliases[ref.field] = alias
    fields = []
    for column in line_columns(t):
        found = kind.reference(column.name)
        fields.append(column if found is None else aliases[found.field].c[found.key].label(found.field))
    return select(*fields).select_from(joined), aliases


def _order(kind: Kind, aliases: dict[str, Any]) -> list[Any]:
    t = kind.table
    order: list[Any] = []
    if kind.parent is not None:
        parent = aliases[kind.parent]
        parent_kind = BY_TABLE[parent.element.name]
        order += [parent.c[name] for name in parent_kind.order] + [parent.c.id]
    order += [t.c[name] for name in kind.order]
    if "id" in t.c:
        order.append(t.c.id)
    return order


def _conversation_filter(kind: Kind, aliases: dict[str, Any], conversation_pk: int) -> Any:
    t = kind.table
    if kind.parent is None:
        return t.c.conversation_pk == conversation_pk
    return aliases[kind.parent].c.conversation_pk == conversation_pk


def export_lines(
    conn: Connection, conversation_pk: int | None = None, *, trace_only: bool = False
) -> Iterator[dict[str, Any]]:
    """Every record of every kind as an export line; with ``conversation_pk``, those of that conversation; with
    ``trace_only``, only the kinds that are part of the trace (``Kind.trace``)."""
    for kind in KINDS:
        if (conversation_pk is not None and not kind.per_conversation) or (trace_only and not kind.trace):
            continue
        stmt, aliases = line_select(kind)
        if conversation_pk is not None:
            stmt = stmt.where(_conversation_filter(kind, aliases, conversation_pk))
        for row in conn.execution_options(yield_per=500).execute(stmt.order_by(*_order(kind, aliases))):
            yield {kind.key: dict(row._mapping)}
