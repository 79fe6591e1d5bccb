"""Derived results kept in the store ("digests"): what a page built from a conversation needs, stored once.

A digest is keyed by a hash its maker computes (the conversation's content fingerprint, what was asked,
Traceloupe's version); the store holds its small ``head`` and its ``parts`` (windows, listings) as rows
of their own, so a reader fetches the head and the one part it shows, never the whole. Both are opaque
bytes here. ``basis`` names the content and version a digest was made from: writing a digest of another
basis for the same conversation drops the stale ones, so old versions do not pile up.

The content fingerprint hashes each stored message's row id, msg_id, import time and record counts:
an import only adds rows and ``--replace`` deletes a row and inserts another, so any change of stored
content changes it, and nothing reads a message body to compute it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable

from sqlalchemy import (
    BigInteger,
    Column,
    Engine,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    delete,
    insert,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel

from core.store.engine import read_transaction, write_transaction
from core.store.tables import CONVERSATIONS, MESSAGES, conversation_key, table_of


class DigestRow(SQLModel, table=True):
    """One stored digest: its key, the conversation and basis it was made from, and its head."""

    __tablename__ = "digests"
    __table_args__ = (Index("ix_digests_conversation", "conversation_pk", "basis"),)

    key: str = Field(sa_column=Column(String, primary_key=True))
    conversation_pk: int = Field(sa_column=conversation_key())
    kind: str = Field(sa_column=Column(String, nullable=False))
    basis: str = Field(sa_column=Column(String, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    head: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class DigestPartRow(SQLModel, table=True):
    """One part of a digest (a window, a listing), read alone."""

    __tablename__ = "digest_parts"

    digest_key: str = Field(sa_column=Column(String, ForeignKey("digests.key", ondelete="CASCADE"), primary_key=True))
    part: str = Field(sa_column=Column(String, primary_key=True))
    n: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


DIGESTS = table_of(DigestRow)
DIGEST_PARTS = table_of(DigestPartRow)

Part = tuple[str, int, bytes]
"""(part name, number, data)."""


def content_fingerprint(engine: Engine, conversation_id: str) -> tuple[int, str] | None:
    """The conversation's primary key and a hash of its stored messages' versions; None when unknown.

    A message row is never updated: a replaced message is a new row, imported at another time, so the
    row ids with their import times name the content (read from ``ix_messages_versions``, not the rows).
    """
    m = MESSAGES.c
    with read_transaction(engine) as conn:
        pk = conn.execute(select(CONVERSATIONS.c.id).where(CONVERSATIONS.c.conversation_id == conversation_id)).scalar()
        if pk is None:
            return None
        rows = conn.execute(
            select(m.id, m.imported_at, m.records, m.damaged).where(m.conversation_pk == pk).order_by(m.id)
        )
        digest = hashlib.sha256()
        for row in rows:
            digest.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
    return pk, digest.hexdigest()


def read_head(engine: Engine, key: str) -> bytes | None:
    """A digest's head, or None when it is not stored."""
    with read_transaction(engine) as conn:
        return conn.execute(select(DIGESTS.c.head).where(DIGESTS.c.key == key)).scalar()


def read_part(engine: Engine, key: str, part: str, n: int) -> bytes | None:
    """One part of a digest, or None."""
    p = DIGEST_PARTS.c
    with read_transaction(engine) as conn:
        return conn.execute(select(p.data).where(p.digest_key == key, p.part == part, p.n == n)).scalar()


def read_numbered_parts(engine: Engine, key: str, part: str, first: int, end: int) -> list[tuple[int, bytes]]:
    """Parts ``[first, end)`` of one name with their numbers, in order (those that exist)."""
    p = DIGEST_PARTS.c
    with read_transaction(engine) as conn:
        query = select(p.n, p.data).where(p.digest_key == key, p.part == part, p.n >= first, p.n < end).order_by(p.n)
        return [(n, data) for n, data in conn.execute(query)]


def read_parts_in(engine: Engine, key: str, part: str, numbers: Iterable[int]) -> list[tuple[int, bytes]]:
    """The parts of one name with these numbers, with their numbers, in order (those that exist)."""
    wanted = sorted(set(numbers))
    if not wanted:
        return []
    p = DIGEST_PARTS.c
    with read_transaction(engine) as conn:
        query = select(p.n, p.data).where(p.digest_key == key, p.part == part, p.n.in_(wanted)).order_by(p.n)
        return [(n, data) for n, data in conn.execute(query)]


def write_digest(
    engine: Engine, key: str, *, conversation_pk: int, kind: str, basis: str, head: bytes, parts: Iterable[Part]
) -> None:
    """Store a digest and its parts in one transaction, dropping the conversation's digests of another basis.

    A digest already stored under ``key`` (another process made it first) is left as it is: same key, same facts.
    """
    rows = [{"digest_key": key, "part": name, "n": n, "data": data} for name, n, data in parts]
    try:
        with write_transaction(engine) as conn:
            if conn.execute(select(DIGESTS.c.key).where(DIGESTS.c.key == key)).first() is not None:
                return
            stale = select(DIGESTS.c.key).where(DIGESTS.c.conversation_pk == conversation_pk, DIGESTS.c.basis != basis)
            conn.execute(delete(DIGEST_PARTS).where(DIGEST_PARTS.c.digest_key.in_(stale)))
            conn.execute(delete(DIGESTS).where(DIGESTS.c.conversation_pk == conversation_pk, DIGESTS.c.basis != basis))
            conn.execute(
                insert(DIGESTS).values(
                    key=key,
                    conversation_pk=conversation_pk,
                    kind=kind,
                    basis=basis,
                    created_at=int(time.time() * 1000),
                    head=head,
                )
            )
            if rows:
                conn.execute(insert(DIGEST_PARTS), rows)
    except IntegrityError:  # written by another process between the check and the insert
        if read_head(engine, key) is None:
            raise


def count_digests(engine: Engine, conversation_id: str | None = None, kind: str | None = None) -> int:
    """How many digests are stored (of one conversation, of one kind)."""
    d = DIGESTS.c
    query = select(d.key)
    if conversation_id is not None:
        query = query.join(CONVERSATIONS, CONVERSATIONS.c.id == d.conversation_pk).where(
            CONVERSATIONS.c.conversation_id == conversation_id
        )
    if kind is not None:
        query = query.where(d.kind == kind)
    with read_transaction(engine) as conn:
        return len(conn.execute(query).all())


def write_part(engine: Engine, key: str, part: str, n: int, data: bytes) -> None:
    """Add one part to a stored digest; nothing when it is there already or the digest is gone."""
    p = DIGEST_PARTS.c
    try:
        with write_transaction(engine) as conn:
            if conn.execute(select(DIGESTS.c.key).where(DIGESTS.c.key == key)).first() is None:
                return
            if conn.execute(select(p.n).where(p.digest_key == key, p.part == part, p.n == n)).first() is not None:
                return
            conn.execute(insert(DIGEST_PARTS).values(digest_key=key, part=part, n=n, data=data))
    except IntegrityError:  # another process added it, or dropped the digest, meanwhile
        pass


def part_numbers(engine: Engine, key: str, part: str) -> set[int]:
    """The numbers of the parts of one name a digest holds."""
    p = DIGEST_PARTS.c
    with read_transaction(engine) as conn:
        return set(conn.execute(select(p.n).where(p.digest_key == key, p.part == part)).scalars())
