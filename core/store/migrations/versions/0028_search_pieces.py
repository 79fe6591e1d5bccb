"""A long message's searchable text in pieces: ``message_search_pieces``, and on SQLite their FTS5 index.

``messages.search_text`` held a message's whole searchable text, 124 MB for a 100,000-record trace: SQLite
copied it twice to write the row and FTS5 indexed it as one document, its pending terms several times the
text. It now holds the first piece of ``PIECE_STRIDE + OVERLAP`` characters; the others, each starting
``PIECE_STRIDE`` after the one before (so a needle of up to 256 characters lies whole in one), are rows of
``message_search_pieces`` numbered from 1 (``core.store.search_pieces``). SQLite indexes each piece in
``search_piece_fts`` (trigram, its content the pieces' table, a trigger taking a deleted piece out). The texts
stored before are cut here, a message at a time; their grams and PostgreSQL's chunks, made from the whole
text, stay as they are. A downgrade joins the pieces back into ``messages.search_text``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.fts import create_trigram_index

revision = "0028"
down_revision = "0027"

PIECE_STRIDE = 1_048_576
OVERLAP = 255
"""As this revision cuts: a piece is ``PIECE_STRIDE + OVERLAP`` characters at most."""

_MESSAGES = sa.table("messages", sa.column("id"), sa.column("search_text"))
_PIECES = sa.table("message_search_pieces", sa.column("message_pk"), sa.column("seq"), sa.column("text"))
_DELETE_TRIGGER = (
    "CREATE TRIGGER search_pieces_fts_delete AFTER DELETE ON message_search_pieces BEGIN "
    "INSERT INTO search_piece_fts(search_piece_fts, rowid, text) VALUES ('delete', old.id, old.text); END"
)


def upgrade() -> None:
    conn = op.get_bind()
    op.create_table(
        "message_search_pieces",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("message_pk", sa.Integer(), sa.ForeignKey("messages.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.UniqueConstraint("message_pk", "seq", name="uq_message_search_pieces_seq"),
    )
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        create_trigram_index("search_piece_fts", "text", "message_search_pieces", [_DELETE_TRIGGER])
    else:
        op.execute("SET LOCAL statement_timeout = 0")  # long texts rewritten: the engine's timeout is for requests
    m = _MESSAGES.c
    long = conn.execute(sa.select(m.id).where(sa.func.length(m.search_text) > PIECE_STRIDE)).scalars()
    for pk in list(long):
        text = conn.execute(sa.select(m.search_text).where(m.id == pk)).scalar_one()
        pieces = [text[start : start + PIECE_STRIDE + OVERLAP] for start in range(0, len(text), PIECE_STRIDE)]
        del text
        rows = [{"message_pk": pk, "seq": seq, "text": piece} for seq, piece in enumerate(pieces) if seq > 0]
        conn.execute(sa.insert(_PIECES), rows)
        conn.execute(sa.update(_MESSAGES).where(m.id == pk).values(search_text=pieces[0]))
        if sqlite:  # the first piece is reindexed by the messages' own update trigger
            conn.execute(
                sa.text(
                    "INSERT INTO search_piece_fts(rowid, text) "
                    "SELECT id, text FROM message_search_pieces WHERE message_pk = :pk"
                ),
                {"pk": pk},
            )


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS search_pieces_fts_delete")
        op.execute("DROP TABLE IF EXISTS search_piece_fts")
    else:
        op.execute("SET LOCAL statement_timeout = 0")
    m, p = _MESSAGES.c, _PIECES.c
    pieced = conn.execute(sa.select(p.message_pk).distinct()).scalars()
    for pk in list(pieced):
        text = conn.execute(sa.select(m.search_text).where(m.id == pk)).scalar_one()[:PIECE_STRIDE]
        pieces = conn.execute(sa.select(p.text).where(p.message_pk == pk).order_by(p.seq)).scalars().all()
        text += "".join(piece[:PIECE_STRIDE] for piece in pieces[:-1]) + pieces[-1]
        conn.execute(sa.update(_MESSAGES).where(m.id == pk).values(search_text=text))
    op.drop_table("message_search_pieces")
