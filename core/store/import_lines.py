"""Importing the export lines of every kind (``core.store.export_lines``) with the messages' rules.

Every line is checked first (``prepare_lines``: the one entry point for every kind, runs included),
against a strict model built from its table's columns, so a new column is checked as its column
holds it. Then, in the messages' transaction, kind after kind (what a line names first): a record
already stored as it is is skipped, a different one under the same identity refuses the file
naming its line and id (``--replace`` takes the file's version), and a reference to a record
neither stored nor in the file refuses it too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
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
    UniqueConstraint,
    and_,
    func,
    insert,
    select,
    update,
)

from core.errors import InputError
from core.fields import IDEMPOTENCY_KEY, MODEL, PROVIDER
from core.reader import StoreLine, describe_validation_error
from core.store.export_lines import BY_KEY, KINDS, Kind, Reference, line_columns, line_select, target_of
from core.store.refigure import refigure
from core.store.tables import CONVERSATIONS, MAX_ID_CHARS, MESSAGES

_Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
_BigInt = Annotated[int, Field(ge=-(2**63), lt=2**63)]
_Int = Annotated[int, Field(ge=-(2**31), lt=2**31)]  # INTEGER columns: 32 bits on PostgreSQL
_BOUNDED: dict[str, Any] = {
    "idempotency_key": Annotated[str, Field(min_length=1, max_length=IDEMPOTENCY_KEY.max_chars)],
    "provider": Annotated[str, Field(max_length=PROVIDER.max_chars)],
    "model": Annotated[str, Field(max_length=MODEL.max_chars)],
    "up_to_msg_id": _Id,
}
"""Strings typed elsewhere by a person (a form, a flag): a line holds them to the same rules (``core.fields``)."""
MAX_LEVELS = 255
"""A line nests no deeper than a message may (``core.reader``: what pydantic's serialiser writes back)."""


# -- check ------------------------------------------------------------------


@functools.cache
def _model(kind: Kind) -> tuple[type[BaseModel], frozenset[str]]:
    """The kind's line as a strict model built from its columns, and the fields the database may default."""
    narrower = kind.narrower() if kind.narrower else {}
    fields: dict[str, Any] = {}
    defaulted: set[str] = set()
    for column in line_columns(kind.table):
        ref = kind.reference(column.name)
        name = column.name if ref is None else ref.field
        kind_of: Any = narrower.get(name) or _BOUNDED.get(name) or _type_of(column)
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


def prepare_lines(lines: Sequence[StoreLine], *, postgres: bool = False) -> list[PreparedLine]:
    """Check every store line, whatever its kind; InputError naming the file, the line and the field on the first
    bad one.

    The limits of messages hold: at most ``MAX_LEVELS`` levels, ids of at most ``MAX_ID_CHARS``, and with
    ``postgres`` no U+0000 anywhere (JSONB and text columns cannot hold it).
    """
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
        root = f"{line.path}.{kind.key}"
        if _levels(line.value) > MAX_LEVELS:
            raise InputError(
                f"a {kind.label} nested too deeply to store (at most {MAX_LEVELS} levels, as a message)",
                source=line.source,
                line=line.line,
                path=root,
            )
        nul = _nul_at(body, root) if postgres else None
        if nul is not None:
            raise InputError("contains U+0000, which PostgreSQL cannot store", source=line.source, line=line.line,
                             path=nul)  # fmt: skip
        try:
            checked = model.model_validate(body)
        except ValidationError as exc:
            path, reason = describe_validation_error(exc, body, f"{line.path}.{kind.key}")
            raise InputError(f"not a {kind.label}: {reason}", source=line.source, line=line.line, path=path) from None
        fields = checked.model_dump()
        for name in defaulted - checked.model_fields_set:
            del fields[name]
        if kind.reader is not None:
            fields = _read(kind, fields, line, root)
        out.append(PreparedLine(kind=kind, fields=fields, line=line))
    return out


def _read(kind: Kind, fields: dict[str, Any], line: StoreLine, root: str) -> dict[str, Any]:
    """The line's fields as the kind stores them; its reader's refusal placed in the file, the line and the field."""
    assert kind.reader is not None
    try:
        return kind.reader()(fields)
    except InputError as exc:
        path = f"{root}.{exc.path}" if exc.path else root
        raise InputError(f"not a {kind.label}: {exc.reason}", source=line.source, line=line.line, path=path) from None


def _levels(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0), without recursion: a hostile line may nest a thousand levels."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_LEVELS:
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _nul_at(value: Any, root: str) -> str | None:
    """The JSON path of the first string or key holding U+0000, or None."""
    stack: list[tuple[Any, str]] = [(value, root)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                if "\x00" in key:
                    return path
                stack.append((child, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


# -- write ------------------------------------------------------------------


def write_lines(conn: Connection, lines: Sequence[PreparedLine], *, replace: bool = False) -> dict[str, int]:
    """Store the records not stored yet, kind after kind (what a line points at first); how many of each kind
    (by label) were stored or replaced. InputError on a conflict, naming the line: nothing is written then, as
    the caller's transaction is rolled back."""
    stored: dict[str, int] = {}
    to_refigure: set[int] = set()
    for kind in KINDS:
        written = 0
        later: list[tuple[PreparedLine, Any]] = []
        stored_line, _ = line_select(kind)
        for prepared in _one_per_identity([p for p in lines if p.kind is kind]):
            values = _resolved(conn, prepared, deferred=True)
            if kind.user_message is not None:
                _check_user_message(conn, prepared, kind.user_message, values)
            where = _identity_clause(kind, prepared, values)
            found = conn.execute(stored_line.where(where)).first()
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
        if given is None or (deferred and target_of(kind, ref) is kind.table):
            values[ref.column] = None
        else:
            values[ref.column] = _pk_of(conn, prepared, ref, given)
    return values


def _self_references(conn: Connection, prepared: PreparedLine) -> dict[Reference, int]:
    kind = prepared.kind
    return {
        ref: _pk_of(conn, prepared, ref, prepared.fields[ref.field])
        for ref in kind.references
        if target_of(kind, ref) is kind.table and prepared.fields.get(ref.field) is not None
    }


def _check_user_message(conn: Connection, prepared: PreparedLine, field: str, values: dict[str, Any]) -> None:
    """Refuse a record whose ``field`` names a message that is not a user message of its conversation."""
    msg_id = prepared.fields.get(field)
    if msg_id is None:
        return
    m = MESSAGES.c
    where = (m.conversation_pk == values["conversation_pk"], m.msg_id == msg_id)
    role = conn.execute(select(m.role).where(*where)).scalar()
    if role != "user":
        raise refuse_user_message(prepared, field, role)


def refuse_user_message(prepared: PreparedLine, field: str, role: str | None) -> InputError:
    """The refusal of a record whose ``field`` names no user message of its conversation (``role``: what it names)."""
    what = "no message" if role is None else f"a message of role {role!r}"
    return prepared.refused(
        f"{prepared.named()}: its {field} must be a user message of conversation "
        f"{prepared.fields['conversation_id']!r}, and {prepared.fields[field]!r} is {what} there",
        field,
    )


def _pk_of(conn: Connection, prepared: PreparedLine, ref: Reference, given: Any) -> int:
    target = target_of(prepared.kind, ref)
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
        if set(columns) <= set(_identityline_columns(prepared.kind)) or any(values.get(c) is None for c in columns):
            continue
        stmt = select(func.count()).select_from(t).where(*(t.c[c] == values[c] for c in columns))
        if own is not None:
            stmt = stmt.where(~own)
        if conn.execute(stmt).scalar():
            names = ", ".join(c.replace("_pk", "").replace("_", " ") for c in columns)
            raise prepared.refused(
                f"{prepared.named()}: its {names} belongs to another stored {prepared.kind.label}", columns[0]
            )


def _identityline_columns(kind: Kind) -> tuple[str, ...]:
    columns = []
    for name in kind.identity:
        ref = kind.reference_of_field(name)
        columns.append(name if ref is None else ref.column)
    return tuple(columns)


def _unique_sets(table: Table) -> list[tuple[str, ...]]:
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
