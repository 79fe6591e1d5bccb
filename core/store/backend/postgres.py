"""PostgreSQL: psycopg 3, JSONB bodies with each message's exact text beside them, chunked trigram search.

Bulk writes go by COPY (``core.store.bulk``) and by statements over array parameters, unnested:
one statement and a few parameters where SQLite runs the driver's executemany.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Connection,
    Engine,
    Executable,
    FromClause,
    Integer,
    Select,
    Table,
    Text,
    any_,
    bindparam,
    case,
    cast,
    create_engine,
    exists,
    func,
    or_,
    select,
    text,
    union,
    update,
)
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.engine import URL

from core.errors import UnknownNameError
from core.jsonio import loads
from core.store.backend.base import BackendName, ColumnTypes, MessageBatch, Rows
from core.store.bulk import copy_bytes, copy_rows, next_ids
from core.store.grams import MAX_GRAM
from core.store.jsonio import dumps_text
from core.store.pg_search import (
    CONVERSATION_GRAMS,
    SEARCH_CHUNKS,
    STRIDE,
    contains_pattern,
    fold,
    insert_conversations,
    like_pattern,
    write_chunks,
)
from core.store.phase_grams import MIN_NEEDLE, phase_grams
from core.store.pool import ping_when_idle
from core.store.search_pieces import PIECE_STRIDE
from core.store.settings import EngineSettings
from core.store.spilled_body import SpilledBody
from core.store.tables import CONVERSATIONS, MESSAGE_OUTLINES, MESSAGE_SEARCH_PIECES, MESSAGE_TEXTS, MESSAGES

_M = MESSAGES.c
_C = CONVERSATIONS.c
_T = MESSAGE_TEXTS.c
_P = MESSAGE_SEARCH_PIECES.c

_S = SEARCH_CHUNKS.c
_G = CONVERSATION_GRAMS.c
_OWN_TEXT = (_G.folded_id, _G.folded_title)
"""A conversation's own texts searched besides its messages, folded (revision 0032)."""

_NEXT_MESSAGE_IDS = next_ids(MESSAGES)


def _has_gram(grams: ColumnElement[list[str]], needle: str) -> ColumnElement[bool]:
    """Stored grams (``core.store.grams``) hold ``needle``, one or two characters, as their GIN index answers."""
    gram = bindparam("gram", [fold(needle)], type_=pg_dialect.ARRAY(Text), unique=True)
    return grams.op("@>")(gram)  # "contains", spelled out: the tables declare the generic ARRAY type


def _has_phase(grams: ColumnElement[list[str]], folded_needle: str) -> ColumnElement[bool]:
    """Stored grams hold every sampled 5-gram of one of the needle's phases (``core.store.phase_grams``): a
    BitmapOr of one GIN scan per phase, each the intersection of a few rare keys."""
    return or_(
        *(
            grams.op("@>")(bindparam("phase", phase, type_=pg_dialect.ARRAY(Text), unique=True))
            for phase in phase_grams(folded_needle)
        )
    )


def _sampled_then_like(table: Table, folded_needle: str, tested: Sequence[str]) -> Select[Any]:
    """The conversations of ``table``'s rows whose grams hold one of the needle's phases and one of whose ``tested``
    columns holds the needle. The phases' rows come from a subquery with ``OFFSET 0``, which the planner neither
    merges into the query nor pushes a condition into (PostgreSQL's src/backend/optimizer: prep/prepjointree.c,
    ``is_simple_subquery``; path/allpaths.c, ``subquery_is_pushdown_safe``): the ``LIKE`` outside it cannot reach the
    trigram index, whose scan of a needle's common trigrams grows with the store."""
    pattern = contains_pattern(folded_needle)
    sampled = (
        select(table.c.conversation_pk, *(table.c[name] for name in tested))
        .where(_has_phase(table.c.grams, folded_needle))
        .offset(0)
        .subquery("sampled")
    )
    return select(sampled.c.conversation_pk).where(
        or_(*(sampled.c[name].like(pattern, escape="\\") for name in tested))
    )


class PostgresBackend:
    """PostgreSQL, through psycopg 3."""

    name: BackendName = "postgresql"
    serves_job_queue = True
    autocommits_one_statement = True
    refuses_nul = True  # text and JSONB cannot hold U+0000
    keeps_texts = True  # JSONB reorders keys; an export gives back the text imported
    writes_in_ctes = True
    analyzes_after_import = True
    walks_a_subquery = True  # given the walked ids, the planner may hash them and test every one before sorting
    writes_out_of_process = True

    # -- connecting ----------------------------------------------------------

    def driver_url(self, url: URL) -> URL:
        return url.set(drivername="postgresql+psycopg")

    def database_file(self, url: URL) -> Path | None:
        return None

    def make_engine(self, url: URL, settings: EngineSettings) -> Engine:
        engine = create_engine(
            url,
            json_serializer=dumps_text,
            json_deserializer=loads,
            connect_args={"options": f"-c statement_timeout={settings.statement_timeout_ms}"},
            pool_size=settings.pool_size,
            max_overflow=0,
        )
        ping_when_idle(engine)
        return engine

    @contextmanager
    def rebuilding_tables(self, conn: Connection) -> Iterator[None]:
        with conn.begin():  # DDL is transactional: nothing to switch off
            yield

    def integrity_check(self, conn: Connection) -> list[str] | None:
        return None

    def lock(self, conn: Connection, key: int) -> None:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})

    def unbounded_statements(self, conn: Connection) -> None:
        conn.execute(text("SET LOCAL statement_timeout = 0"))

    # -- statements ------------------------------------------------------------

    def insert(self, table: Table) -> pg_dialect.Insert:
        return pg_dialect.insert(table)

    def greatest(self, *values: Any) -> ColumnElement[Any]:
        return func.greatest(*values)  # max() is an aggregate only

    def one_of(self, column: ColumnElement[Any], values: Sequence[Any]) -> ColumnElement[bool]:
        # One array parameter: the statement is compiled once, where IN renders a parameter per value at every call.
        return column == any_(bindparam("one_of", list(values), type_=pg_dialect.ARRAY(column.type), unique=True))

    def row_set(self, name: str, types: ColumnTypes, rows: Rows) -> FromClause:
        # An array parameter per column, not a parameter per value: much less to parse.
        arrays = [
            bindparam(f"{name}_{key}", [row[key] for row in rows], type_=pg_dialect.ARRAY(type_))
            for key, type_ in types.items()
        ]
        return func.unnest(*arrays).table_valued(*types, name=name).render_derived()

    def update_each(
        self, conn: Connection, statement: Callable[[Any], Executable], types: ColumnTypes, rows: Rows
    ) -> None:
        # One statement over arrays: a statement per row took about a tenth of a large import.
        conn.execute(statement(self.row_set("d", types, rows).c))

    def insert_new(self, conn: Connection, table: Table, rows: Rows) -> None:
        if not rows:
            return
        names = list(rows[0])
        source = self.row_set("k", {key: table.c[key].type for key in names}, rows)
        chosen = select(*(source.c[key] for key in names))
        conn.execute(pg_dialect.insert(table).from_select(names, chosen).on_conflict_do_nothing())

    def insert_conversations(self, conn: Connection, rows: Rows) -> dict[str, int]:
        return insert_conversations(conn, rows)

    # -- messages --------------------------------------------------------------

    def message_ids(self, conn: Connection, n: int) -> list[int]:
        return list(conn.execute(_NEXT_MESSAGE_IDS, {"n": n}).scalars())

    def write_messages(self, conn: Connection, batch: MessageBatch) -> None:
        from psycopg.types.json import Jsonb  # the driver, imported where it is used (a SQLite store never loads it)

        rows = batch.rows
        # The bodies are the import's UTF-8 text (``core.store.import_prepare``): COPY hands them to jsonb's parser.
        # A text spilled to a file (``core.store.spilled_body``) is sent to ``message_texts`` a piece at a time and
        # parsed from there by the server: its row holds JSON null until then.
        spilled = {row["id"]: row["body"] for row in rows if isinstance(row["body"], SpilledBody)}
        bodies = [
            {**row, "body": Jsonb(b"null" if row["id"] in spilled else row["body"], dumps=_as_is)} for row in rows
        ]
        copy_rows(conn, MESSAGES, bodies)
        del bodies
        if batch.outlines:
            copy_rows(conn, MESSAGE_OUTLINES, batch.outlines)
        # Every text, outlined or not: an export writes these, byte for byte, not JSONB's rendering.
        held = [_text_row(row) for row in rows if row["id"] not in spilled]
        if held:
            copy_rows(conn, MESSAGE_TEXTS, held, binary_types=("int4", "bytea"))
        for pk, body in spilled.items():
            copy_bytes(conn, MESSAGE_TEXTS, pk, len(body), body.pieces())
        if spilled:
            parsed = cast(func.convert_from(_T.text, "UTF8"), pg_dialect.JSONB)
            conn.execute(update(MESSAGES).where(_M.id == _T.message_pk, _M.id.in_(spilled)).values(body=parsed))
        for pk, pieces in batch.pieced:  # a piece at a time, read back from its file
            for seq, piece in enumerate(pieces.later(), start=1):
                copy_rows(conn, MESSAGE_SEARCH_PIECES, [{"message_pk": pk, "seq": seq, "text": piece}])
        later = dict(batch.pieced)
        made = batch.chunked
        searched = [
            (row["id"], row["conversation_pk"], later[row["id"]].after(row["search_text"]))
            if row["id"] in later
            else (row["id"], row["conversation_pk"], (row["search_text"],))
            for row in rows
            if row["id"] not in made
        ]
        numbered = [(row["id"], row["conversation_pk"], made[row["id"]]) for row in rows if row["id"] in made]
        write_chunks(conn, searched, PIECE_STRIDE, numbered)

    def forget_messages(self, conn: Connection, rows: Sequence[int]) -> None:
        """Nothing to do: every search index of PostgreSQL is the server's, kept current by the delete."""

    def exact_texts(self, conn: Connection, rows: Sequence[int]) -> dict[int, str]:
        found = conn.execute(select(_T.message_pk, _T.text).where(_T.message_pk.in_(rows))).all()
        return {pk: bytes(text).decode() for pk, text in found}

    def read_spans(self, conn: Connection, spans: Sequence[tuple[int, int, int]]) -> list[bytes]:
        # Substrings of message_texts (stored uncompressed), every span in one statement.
        if not spans:
            return []
        wanted = (
            func.unnest(
                bindparam("rows", [s[0] for s in spans], type_=pg_dialect.ARRAY(Integer)),
                bindparam("starts", [s[1] + 1 for s in spans], type_=pg_dialect.ARRAY(Integer)),  # SQL counts from 1
                bindparam("lengths", [s[2] - s[1] for s in spans], type_=pg_dialect.ARRAY(Integer)),
            )
            .table_valued("row", "start", "length", with_ordinality="position")
            .render_derived()
        )
        stmt = (
            select(wanted.c.position, func.substring(_T.text, wanted.c.start, wanted.c.length))
            .select_from(wanted.join(MESSAGE_TEXTS, _T.message_pk == wanted.c.row))
            .order_by(wanted.c.position)
        )
        found = conn.execute(stmt).all()
        if len(found) != len(spans):
            raise UnknownNameError("a stored message's text is gone (deleted since its outline was read)")
        return [bytes(piece) for _, piece in found]

    # -- search ----------------------------------------------------------------

    def matching_conversations(self, needle: str) -> CompoundSelect[Any]:
        # Each under its own index (revisions 0020 and 0031), where an OR of them would read every row.
        if len(needle) <= MAX_GRAM:  # the id's and the title's grams are one row (revision 0031)
            in_chunks = select(_S.conversation_pk).where(_has_gram(_S.grams, needle))
            return union(in_chunks, select(_G.conversation_pk).where(_has_gram(_G.grams, needle)))
        folded = fold(needle)
        if len(folded) >= MIN_NEEDLE:  # one scan of the sampled 5-grams each, in place of the trigrams' three
            own = [column.name for column in _OWN_TEXT]
            return union(
                _sampled_then_like(SEARCH_CHUNKS, folded, ["folded"]),
                _sampled_then_like(CONVERSATION_GRAMS, folded, own),
            )
        pattern = like_pattern(needle)
        in_chunks = select(_S.conversation_pk).where(_S.folded.like(pattern, escape="\\"))
        in_own = (select(_G.conversation_pk).where(column.like(pattern, escape="\\")) for column in _OWN_TEXT)
        return union(in_chunks, *in_own)

    def conversation_contains(self, needle: str, rows: FromClause) -> ColumnElement[bool]:
        pattern = like_pattern(needle)
        # The walked row's own id and title, folded by the server: a few microseconds each, where their folded copies
        # in conversation_grams cost two more random pages per conversation walked.
        own = (func.traceloupe_fold(rows.c[key]).like(pattern, escape="\\") for key in ("conversation_id", "title"))
        # OFFSET 0 keeps each test a lookup of the one conversation: the planner may otherwise run it once, hashed,
        # over every row of the table, which for a needle no index serves is a scan of the whole store (PostgreSQL's
        # src/backend/optimizer/plan/subselect.c, ``simplify_EXISTS_query``, leaves a query with an OFFSET as it is).
        return or_(
            *own,
            exists(select(1).where(_S.conversation_pk == rows.c.id, _S.folded.like(pattern, escape="\\")).offset(0)),
        )

    def custom_plans(self, conn: Connection) -> None:
        # psycopg prepares a statement run five times; the server then tries a generic plan, which for a
        # search walks every conversation (https://www.postgresql.org/docs/current/sql-prepare.html).
        conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))

    def match_windows(self, conversation_ids: Sequence[str], needle: str, reach: int, width: int) -> Select[Any]:
        # One row per conversation: its first matching chunk, whose place in the text the fold keeps,
        # and the window read from the text itself.
        s = SEARCH_CHUNKS.c
        wanted = select(_C.id).where(_C.conversation_id.in_(conversation_ids))
        offset = func.strpos(s.folded, fold(needle))  # not LIKE: the trigram index would read every match
        first = (
            select(s.conversation_pk, s.message_pk, (s.seq * STRIDE + offset).label("at"))
            .where(s.conversation_pk.in_(wanted), offset > 0)
            .order_by(s.conversation_pk, s.message_pk, s.seq)
            .ext(distinct_on(s.conversation_pk))
            .subquery()
        )
        start = case((first.c.at > reach, first.c.at - reach), else_=1)
        # The window read from the piece of the text the match begins in (the first is the message's own column).
        seq = (first.c.at - 1) // PIECE_STRIDE
        later = (
            select(_P.text).where(_P.message_pk == first.c.message_pk, _P.seq == seq).correlate(first).scalar_subquery()
        )
        piece = case((seq == 0, _M.search_text), else_=later)
        from_piece = case((start > seq * PIECE_STRIDE, start - seq * PIECE_STRIDE), else_=1)
        return (
            select(
                _C.conversation_id,
                first.c.at,
                seq * PIECE_STRIDE + from_piece,
                func.substr(piece, from_piece, width),
            )
            .select_from(first)
            .join(MESSAGES, _M.id == first.c.message_pk)
            .join(CONVERSATIONS, _C.id == first.c.conversation_pk)
            .order_by(first.c.message_pk)
        )


POSTGRES = PostgresBackend()


def _as_is(text: Any) -> Any:
    """A JSON text given to psycopg's jsonb dumper, which expects to serialise a value."""
    return text


def _text_row(row: dict[str, Any]) -> dict[str, Any]:
    body = row["body"]
    return {"message_pk": row["id"], "text": body.encode() if isinstance(body, str) else body}
