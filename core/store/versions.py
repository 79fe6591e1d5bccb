"""A message's identity, (conversation_id, msg_id), and what to do when a file holds another version of one.

Re-importing the same message is a no-op. A *different* message under an identity already
stored, or two different messages under one identity in the same file, refuses the file
(InputError naming the file, the line, the id and where the other version lives): skipping
it would lose a message silently, and a file could claim ids in advance to drop later ones.
``traceloupe import --replace`` takes the file's version instead of the stored one.

"The same" is the same JSON value: the text byte for byte, or else the same value with keys
in any order (PostgreSQL's JSONB keeps no key order, so an export from it re-imports as the same).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, Integer, Text, and_, cast, select

from core.errors import InputError
from core.jsonio import dumps, loads
from core.store.backend import backend_of
from core.store.spilled_body import SpilledBody
from core.store.tables import MESSAGES

Identity = tuple[str, str]
"""(conversation_id, msg_id): unique in the store."""


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """The message stored under an identity: its row, its text, and where it was imported from."""

    row: int
    text: str
    source: str
    line: int | None

    @property
    def place(self) -> str:
        return self.source if self.line is None else f"{self.source}:{self.line}"


def same_message(a: str | bytes | SpilledBody, b: str | bytes | SpilledBody) -> bool:
    """Whether two JSON texts (decoded, UTF-8, or spilled to a file) hold the same value (key order aside)."""
    a, b = (text.read() if isinstance(text, SpilledBody) else text for text in (a, b))
    if isinstance(a, str) != isinstance(b, str):
        a, b = (a.encode() if isinstance(a, str) else a), (b.encode() if isinstance(b, str) else b)
    return a == b or dumps(loads(a), sort_keys=True) == dumps(loads(b), sort_keys=True)


def conflict_in_file(identity: Identity, *, source: str, line: int | None, path: str, first: str) -> InputError:
    """Two different messages under one identity in one file: which one to keep is not ours to guess."""
    conversation_id, msg_id = identity
    return InputError(
        f"message {msg_id!r} of conversation {conversation_id!r} appears twice with different content "
        f"(first at {first}); give each message its own msg_id",
        source=source,
        line=line,
        path=path,
    )


def conflict_with_stored(
    identity: Identity, stored: StoredVersion, *, source: str, line: int | None, path: str
) -> InputError:
    """A different message under an identity already stored."""
    conversation_id, msg_id = identity
    return InputError(
        f"message {msg_id!r} of conversation {conversation_id!r} differs from the one already stored "
        f"(imported from {stored.place}); import with --replace to store this version instead",
        source=source,
        line=line,
        path=path,
    )


_KEY_TYPES = {"w_pk": Integer, "w_id": Text}
"""The identities looked up: a conversation's row id and a msg_id."""


def stored_versions(conn: Connection, wanted: Iterable[tuple[int, Identity]]) -> dict[Identity, StoredVersion]:
    """The stored version of each identity that has one; ``wanted`` gives each with its conversation's row id.

    One statement for the look-up, over the (conversation_pk, msg_id) unique index, and one for
    the texts of those found (none on a first import). On PostgreSQL the text is the one the
    import wrote (``message_texts``) where there is one, else JSONB's rendering.
    """
    m = MESSAGES.c
    pairs = list(wanted)
    if not pairs:
        return {}
    names = {(pk, identity[1]): identity for pk, identity in pairs}
    columns = (m.id, m.conversation_pk, m.msg_id, m.source, m.line)
    backend = backend_of(conn)
    keys = backend.row_set("w", _KEY_TYPES, [{"w_pk": pk, "w_id": identity[1]} for pk, identity in pairs])
    on = and_(m.conversation_pk == keys.c.w_pk, m.msg_id == keys.c.w_id)
    found = conn.execute(select(*columns).select_from(keys.join(MESSAGES, on))).all()
    if not found:
        return {}
    rows = [r.id for r in found]
    texts: dict[int, str] = {
        pk: text for pk, text in conn.execute(select(m.id, cast(m.body, Text)).where(m.id.in_(rows)))
    }
    texts.update(backend.exact_texts(conn, list(texts)))
    return {
        names[(r.conversation_pk, r.msg_id)]: StoredVersion(row=r.id, text=texts[r.id], source=r.source, line=r.line)
        for r in found
    }
