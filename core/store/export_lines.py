"""Every stored record an export holds beside the messages: one JSONL line ``{"traceloupe_<kind>": {...}}`` each.

A kind is one table (``KINDS``). Its line holds every column of a row but the row's own ``id``, and
each foreign key as the natural key of the row it points at (``conversation_pk`` is written as
``conversation_id``, ``step_run_pk`` as ``step_run_id``), so a column added to a table is exported
and imported with no change here. A table that is not a kind is derived from the messages or is a
process's working state, never a record (``NOT_EXPORTED``); a test holds every table to one list.

Lines are written kind after kind, in ``KINDS`` order (what a line points at comes first), each
kind in the order of its rows' times, with sorted keys: the same store gives the same bytes on
both backends (PostgreSQL's JSONB keeps no key order). The import checks every line (``prepare_lines``,
the one entry point for every kind, runs included) before it writes, then stores them in the
messages' transaction with the messages' rules: a record already stored as it is is skipped, a
different one under the same identity refuses the file (``--replace`` takes the file's version).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Connection,
    Float,
    Integer,
    String,
    Table,
    and_,
    func,
    insert,
    select,
    update,
)

from core.errors import InputError
from core.reader import STORE_LINE_PREFIX, StoreLine, describe_validation_error
from core.store.refigure import refigure
from core.store.tables import (
    CONVERSATIONS,
    MAX_ID_CHARS,
    RUNS,
    STEP_RUNS,
    STEPS,
    SUITE_MEMBERS,
    SUITE_RUN_ITEMS,
    SUITE_RUNS,
    SUITES,
)

_Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
_BigInt = Annotated[int, Field(ge=-(2**63), lt=2**63)]
_Int = Annotated[int, Field(ge=-(2**31), lt=2**31)]  # INTEGER columns: 32 bits on PostgreSQL


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
    from core.store.step_runs import StepRunStatus

    return {"status": StepRunStatus}


def _step_types() -> dict[str, Any]:
    from core.store.step_runs import StepVerdict

    return {"verdict": StepVerdict}


def _suite_types() -> dict[str, Any]:
    from core.suites.views import Mode, Outcome, SuiteRunStatus  # here: core.suites imports the store

    return {"mode": Mode, "status": SuiteRunStatus, "outcome": Outcome}


KINDS: tuple[Kind, ...] = (
    Kind(
        "run", "run", RUNS, ("run_id",), (_CONVERSATION,), ("started_at",),
        per_conversation=True, narrower=_run_types, counted=True,
    ),
    Kind(
        "step_run", "step run", STEP_RUNS, ("run_id",), (_CONVERSATION,), ("started_at",),
        per_conversation=True, narrower=_step_run_types,
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
    "digests": "a cache, derived from the messages",
    "digest_parts": "a cache, derived from the messages",
    "jobs": "the queue's work in flight, not a record",
    "app_secrets": "the dashboard's signing key: never leaves the store",
}
"""Tables an export leaves out, and why."""


def _columns(table: Table) -> list[Column[Any]]:
    """The columns a line holds (foreign keys in their reference's place): every one but the row id."""
    return [c for c in table.c if not (c.name == "id" and c.primary_key)]


def _target(kind: Kind, reference: Reference) -> Table:
    """The table a reference points at, read from the foreign key."""
    (fk,) = kind.table.c[reference.column].foreign_keys
    table = fk.column.table
    assert isinstance(table, Table)
    return table


# -- export --------------------------------------------------------------


def _select(kind: Kind) -> tuple[Any, dict[str, Any]]:
    """The kind's rows as line fields (references joined to their natural keys), and the joined aliases."""
    t = kind.table
    joined: Any = t
    aliases: dict[str, Any] = {}
    for ref in kind.references:
        alias = _target(kind, ref).alias(f"ref_{ref.field}")
        joined = joined.outerjoin(alias, alias.c.id == t.c[ref.column])
        aliases[ref.field] = alias
    fields = []
    for column in _columns(t):
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


def export_lines(conn: Connection, conversation_pk: int | None = None) -> Iterator[dict[str, Any]]:
    """Every record of every kind as an export line; with ``conversation_pk``, those of that conversation."""
    for kind in KINDS:
        if conversation_pk is not None and not kind.per_conversation:
            continue
        stmt, aliases = _select(kind)
        if conversation_pk is not None:
            stmt = stmt.where(_conversation_filter(kind, aliases, conversation_pk))
        for row in conn.execution_options(yield_per=500).execute(stmt.order_by(*_order(kind, aliases))):
            yield {kind.key: dict(row._mapping)}


# -- import: check ---------------------------------------------------------


@functools.cache
def _model(kind: Kind) -> tuple[type[BaseModel], frozenset[str]]:
    """The kind's line as a strict model built from its columns, and the fields the database may default."""
    narrower = kind.narrower() if kind.narrower else {}
    fields: dict[str, Any] = {}
    defaulted: set[str] = set()
    for column in _columns(kind.table):
        ref = kind.reference(column.name)
        name = column.name if ref is None else ref.field
        kind_of: Any = narrower.get(name) or _type_of(column)
        if ref is not None or (name in kind.identity and kind_of is str):
            kind_of = _Id  # a name other records are found by: an indexed, bounded string
        if column.nullable:
            fields[name] = (kind_of | None, None)
        elif column.server_default is not None:
            fields[name] = (kind_of, None)  # left out: the column's default
            defaulted.add(name)
        else:
            fields[name] = (kind_of, ...)
    config = ConfigDict(extra="forbid", strict=True)
    return create_model(f"{kind.name}_line", __config__=config, **fields), frozenset(defaulted)


def _type_of(column: Column[Any]) -> Any:
    """The JSON value a column takes, as strictly as the column holds it."""
    sql = column.type
    if isinstance(sql, BigInteger):
        return _BigInt
    if isinstance(sql, Integer):
        return _Int
    if isinstance(sql, Float):
        return float
    if isinstance(sql, String):
        return str
    if isinstance(sql, JSON):
        return dict[str, Any] | list[Any]
    raise TypeError(f"{column.table.name}.{column.name}: no export line type for {sql!r}")


@dataclass(frozen=True, slots=True)
class PreparedLine:
    """A store line checked and ready to store, with where it was read."""

    kind: Kind
    fields: dict[str, Any]
    line: StoreLine

    @property
    def identity(self) -> tuple[Any, ...]:
        return tuple(self.fields[name] for name in self.kind.identity)

    def named(self) -> str:
        """The record in an error: ``run 'r1'``, ``step (step_run_id 'r1', position 2)``."""
        if len(self.kind.identity) == 1:
            return f"{self.kind.label} {self.identity[0]!r}"
        named = ", ".join(f"{n} {v!r}" for n, v in zip(self.kind.identity, self.identity, strict=True))
        return f"{self.kind.label} ({named})"

    def refused(self, reason: str, field: str | None = None) -> InputError:
        path = f"{self.line.path}.{self.kind.key}" + (f".{field}" if field else "")
        return InputError(reason, source=self.line.source, line=self.line.line, path=path)


def prepare_lines(lines: Sequence[StoreLine]) -> list[PreparedLine]:
    """Check every store line, whatever its kind; InputError naming the file, the line and the field on the first
    bad one."""
    out: list[PreparedLine] = []
    for line in lines:
        kind = BY_KEY.get(line.key)
        if kind is None:
            known = ", ".join(k.key for k in KINDS)
            raise InputError(
                f"unknown record kind {line.key!r}; known: {known}", source=line.source, line=line.line, path=line.path
            )
        model, defaulted = _model(kind)
        body = line.value[line.key]
        try:
            checked = model.model_validate(body)
        except ValidationError as exc:
            path, reason = describe_validation_error(exc, body, f"{line.path}.{kind.key}")
            raise InputError(f"not a {kind.label}: {reason}", source=line.source, line=line.line, path=path) from None
        fields = checked.model_dump()
        for name in defaulted - checked.model_fields_set:
            del fields[name]
        out.append(PreparedLine(kind=kind, fields=fields, line=line))
    return out


# -- import: write ---------------------------------------------------------


def write_lines(conn: Connection, lines: Sequence[PreparedLine], *, replace: bool = False) -> dict[str, int]:
    """Store the records not stored yet, kind after kind (what a line points at first); how many of each kind
    (by label) were stored or replaced. InputError on a conflict, naming the line: nothing is written then, as
    the caller's transaction is rolled back."""
    stored: dict[str, int] = {}
    to_refigure: set[int] = set()
    for kind in KINDS:
        written = 0
        later: list[tuple[PreparedLine, Any]] = []
        for prepared in _one_per_identity([p for p in lines if p.kind is kind]):
            values = _resolved(conn, prepared, deferred=True)
            where = _identity_clause(kind, prepared, values)
            stmt, _aliases = _select(kind)
            found = conn.execute(stmt.where(where)).first()
            if found is not None:
                if _same(dict(found._mapping), prepared.fields):
                    continue
                if not replace:
                    raise prepared.refused(
                        f"{prepared.named()} differs from the one already stored; "
                        "import with --replace to store this version instead",
                        kind.identity[0],
                    )
                to_refigure |= _conversations_of(conn, kind, where)
            _check_unique(conn, prepared, values, where if found is not None else None)
            if found is None:
                conn.execute(insert(kind.table).values(**values))
                if kind.counted:
                    _count_run(conn, values)
            else:
                conn.execute(update(kind.table).where(where).values(**values))
                to_refigure |= _conversations_of(conn, kind, where)
            later.append((prepared, where))
            written += 1
        for prepared, where in later:  # a reference to a record of the same kind, stored now
            own = {r.column: v for r, v in _self_references(conn, prepared).items()}
            if own:
                conn.execute(update(kind.table).where(where).values(**own))
        if written:
            stored[kind.label] = written
    if to_refigure:
        refigure(conn, sorted(to_refigure))
    return stored


def _one_per_identity(lines: list[PreparedLine]) -> list[PreparedLine]:
    """The file's records by identity; a repeat is dropped when it is the same record, refused when not."""
    unique: dict[tuple[Any, ...], PreparedLine] = {}
    for p in lines:
        first = unique.setdefault(p.identity, p)
        if first is not p and not _same(first.fields, p.fields):
            raise p.refused(
                f"{p.named()} appears twice with different content (first at line {first.line.line})",
                p.kind.identity[0],
            )
    return list(unique.values())


def _same(stored: dict[str, Any], given: dict[str, Any]) -> bool:
    """Whether the stored record holds every value the line gives (a value the line leaves out: the default)."""
    return all(stored.get(name) == value for name, value in given.items())


def _resolved(conn: Connection, prepared: PreparedLine, *, deferred: bool) -> dict[str, Any]:
    """The row's values: each reference's natural key looked up to its row id (a reference to the same kind
    is left NULL here when ``deferred``, and set once every record of the kind is stored)."""
    kind = prepared.kind
    values = {name: value for name, value in prepared.fields.items() if kind.reference_of_field(name) is None}
    for ref in kind.references:
        given = prepared.fields.get(ref.field)
        if given is None or (deferred and _target(kind, ref) is kind.table):
            values[ref.column] = None
        else:
            values[ref.column] = _pk_of(conn, prepared, ref, given)
    return values


def _self_references(conn: Connection, prepared: PreparedLine) -> dict[Reference, int]:
    kind = prepared.kind
    return {
        ref: _pk_of(conn, prepared, ref, prepared.fields[ref.field])
        for ref in kind.references
        if _target(kind, ref) is kind.table and prepared.fields.get(ref.field) is not None
    }


def _pk_of(conn: Connection, prepared: PreparedLine, ref: Reference, given: Any) -> int:
    target = _target(prepared.kind, ref)
    pk = conn.execute(select(target.c.id).where(target.c[ref.key] == given)).scalar()
    if pk is None:
        raise prepared.refused(
            f"{prepared.named()} names {ref.label} {given!r}, neither stored nor in this file", ref.field
        )
    return int(pk)


def _identity_clause(kind: Kind, prepared: PreparedLine, values: dict[str, Any]) -> Any:
    t = kind.table
    parts = []
    for name in kind.identity:
        ref = kind.reference_of_field(name)
        parts.append(t.c[name] == prepared.fields[name] if ref is None else t.c[ref.column] == values[ref.column])
    return and_(*parts)


def _check_unique(conn: Connection, prepared: PreparedLine, values: dict[str, Any], own: Any) -> None:
    """Refuse a record whose other unique values (an idempotency key) belong to another stored record."""
    t = prepared.kind.table
    for columns in _unique_sets(t):
        if set(columns) <= set(_identity_columns(prepared.kind)) or any(values.get(c) is None for c in columns):
            continue
        stmt = select(func.count()).select_from(t).where(*(t.c[c] == values[c] for c in columns))
        if own is not None:
            stmt = stmt.where(~own)
        if conn.execute(stmt).scalar():
            names = ", ".join(c.replace("_pk", "").replace("_", " ") for c in columns)
            raise prepared.refused(
                f"{prepared.named()}: its {names} belongs to another stored {prepared.kind.label}", columns[0]
            )


def _identity_columns(kind: Kind) -> tuple[str, ...]:
    columns = []
    for name in kind.identity:
        ref = kind.reference_of_field(name)
        columns.append(name if ref is None else ref.column)
    return tuple(columns)


def _unique_sets(table: Table) -> list[tuple[str, ...]]:
    from sqlalchemy import UniqueConstraint

    sets: list[tuple[str, ...]] = [(c.name,) for c in table.c if c.unique]
    sets += [tuple(c.name for c in u.columns) for u in table.constraints if isinstance(u, UniqueConstraint)]
    primary = tuple(c.name for c in table.primary_key.columns)
    if primary != ("id",):
        sets.append(primary)
    return sets


def _conversations_of(conn: Connection, kind: Kind, where: Any) -> set[int]:
    if "conversation_pk" not in kind.table.c:
        return set()
    return set(conn.execute(select(kind.table.c.conversation_pk).where(where)).scalars())


def _count_run(conn: Connection, values: dict[str, Any]) -> None:
    """A run stored now counts on its conversation's list row, as a replay does (``core.store.runs``)."""
    c = CONVERSATIONS.c
    started = values["started_at"]
    later = func.max if conn.dialect.name == "sqlite" else func.greatest  # both: NULL when last_activity is
    last = later(c.last_activity, started)
    conn.execute(
        update(CONVERSATIONS)
        .where(c.id == values["conversation_pk"])
        .values(runs=c.runs + 1, last_activity=func.coalesce(last, started))
    )
