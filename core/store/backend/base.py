"""What a database backend answers: the protocol both backends implement, and the types it speaks in."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from sqlalchemy import ColumnElement, CompoundSelect, Connection, Engine, Executable, FromClause, Select, Table
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import URL
from sqlalchemy.types import TypeEngine

from core.store.pg_search import Chunk
from core.store.search_pieces import SearchPieces
from core.store.settings import EngineSettings

BackendName = Literal["sqlite", "postgresql"]
Insert = sqlite_dialect.Insert | pg_dialect.Insert
"""An INSERT that can do nothing on a conflict (each backend's own)."""
ColumnTypes = Mapping[str, TypeEngine[Any] | type[TypeEngine[Any]]]
Rows = Sequence[Mapping[str, Any]]
WRITE_OPTION = "traceloupe_write"
"""The execution option that marks a connection as a writer's (SQLite begins its transactions IMMEDIATE)."""


@dataclass(frozen=True, slots=True)
class MessageBatch:
    """Message rows an import inserts (with their ids given), and what goes in beside them."""

    rows: list[dict[str, Any]]
    """A row's body is its text, or a ``SpilledBody`` (a long line's, ``core.store.spilled_body``) written a piece
    at a time."""
    outlines: list[dict[str, Any]]
    pieced: Sequence[tuple[int, SearchPieces]] = ()
    """The searchable text's later pieces of the messages it names by id (``core.store.search_pieces``)."""
    chunked: Mapping[int, Sequence[Chunk]] = field(default_factory=dict)
    """PostgreSQL's search chunks of messages by id, made as they were read (other backends keep none)."""


class Backend(Protocol):
    """What differs between the databases a store runs on; one instance per backend, shared by every engine."""

    def __hash__(self) -> int:
        """Backends key the caches of statements built for them."""

    @property
    def name(self) -> BackendName:
        """``sqlite`` or ``postgresql`` (for messages and tests; code asks the flags and methods below)."""

    # -- what it can do ------------------------------------------------------

    @property
    def serves_job_queue(self) -> bool:
        """A separate ``traceloupe worker`` can serve its job queue (Procrastinate, whose tables it holds)."""

    @property
    def autocommits_one_statement(self) -> bool:
        """A write or read of one statement runs in autocommit: atomic alone, two round trips fewer."""

    @property
    def refuses_nul(self) -> bool:
        """Its text and JSON columns cannot hold U+0000, so an import refuses a string that contains it."""

    @property
    def keeps_texts(self) -> bool:
        """A message's exact JSON text is kept beside its body (``message_texts``): the body is not that text."""

    @property
    def writes_in_ctes(self) -> bool:
        """A statement can write in a CTE beside its main write (two writes, one round trip)."""

    @property
    def analyzes_after_import(self) -> bool:
        """Its planner reads statistics that a bulk import makes stale until they are refreshed."""

    @property
    def walks_a_subquery(self) -> bool:
        """A search's walk is best given as a subquery of the walked rows in the list's order, tested as they come
        and stopped at the page's last match; otherwise as the walked ids, each row then looked up and tested."""

    @property
    def writes_out_of_process(self) -> bool:
        """Its writes are done by a server while this process waits: an import prepares its next batch meanwhile,
        on another thread (``core.store.batch_writer``)."""

    # -- connecting ----------------------------------------------------------

    def driver_url(self, url: URL) -> URL:
        """``url`` with the driver Traceloupe talks to this backend with."""

    def database_file(self, url: URL) -> Path | None:
        """The file the database lives in; None for a server."""

    def make_engine(self, url: URL, settings: EngineSettings) -> Engine:
        """An engine for ``url`` with ``settings`` applied on every connection."""

    def rebuilding_tables(self, conn: Connection) -> AbstractContextManager[None]:
        """A transaction on ``conn`` in which a migration may drop and rebuild tables."""

    def integrity_check(self, conn: Connection) -> list[str] | None:
        """The database's own check of its file (``["ok"]`` when sound); None where it has none."""

    def lock(self, conn: Connection, key: int) -> None:
        """Hold the lock ``key`` until the transaction ends (writers of one kind one at a time)."""

    def unbounded_statements(self, conn: Connection) -> None:
        """Let this transaction's statements run as long as they need (an import): the engine's statement
        timeout is for requests."""

    # -- statements ------------------------------------------------------------

    def insert(self, table: Table) -> Insert:
        """An INSERT into ``table`` that can do nothing on a conflict."""

    def greatest(self, *values: Any) -> ColumnElement[Any]:
        """SQL's larger of its arguments (NULL when one is)."""

    def one_of(self, column: ColumnElement[Any], values: Sequence[Any]) -> ColumnElement[bool]:
        """``column`` equals one of ``values`` (a batch's worth)."""

    def row_set(self, name: str, types: ColumnTypes, rows: Rows) -> FromClause:
        """``rows`` (at least one) as a table ``name`` with the columns ``types`` names, to join in a query."""

    def update_each(
        self, conn: Connection, statement: Callable[[Any], Executable], types: ColumnTypes, rows: Rows
    ) -> None:
        """Run ``statement(columns)`` for every row, ``columns`` giving the row's values by name."""

    def insert_new(self, conn: Connection, table: Table, rows: Rows) -> None:
        """INSERT ``rows`` into ``table``, each one that conflicts with a stored row left out."""

    def insert_conversations(self, conn: Connection, rows: Rows) -> dict[str, int]:
        """INSERT new conversations (none of them stored: the import looked them up under its lock), and what the
        backend indexes beside them by hand; their row ids, by conversation id."""

    # -- messages --------------------------------------------------------------

    def message_ids(self, conn: Connection, n: int) -> list[int]:
        """``n`` unused message row ids (taken under the import lock)."""

    def write_messages(self, conn: Connection, batch: MessageBatch) -> None:
        """Insert a batch of message rows, what it holds beside them, and what the backend keeps beside them."""

    def forget_messages(self, conn: Connection, rows: Sequence[int]) -> None:
        """Take out of the search indexes the backend keeps by hand what these message rows, about to be
        deleted, put in."""

    def exact_texts(self, conn: Connection, rows: Sequence[int]) -> dict[int, str]:
        """The exact JSON text an import wrote for these message rows, where it is kept apart from the body."""

    def read_spans(self, conn: Connection, spans: Sequence[tuple[int, int, int]]) -> list[bytes]:
        """Byte ranges ``(row, start, end)`` of stored messages' JSON text, in order."""

    # -- search ----------------------------------------------------------------

    def matching_conversations(self, needle: str) -> Select[Any] | CompoundSelect[Any]:
        """The row ids of conversations whose id, title or a message contains ``needle`` (case-insensitive,
        literal), found through the search indexes where the needle is long enough for them."""

    def conversation_contains(self, needle: str, rows: FromClause) -> ColumnElement[bool]:
        """The row at hand of ``rows`` (conversations with their ``id``, ``conversation_id`` and ``title``,
        correlated) has ``needle`` in its id, title or a message: a test of one row at a time, for a walk of the list
        in its order."""

    def custom_plans(self, conn: Connection) -> None:
        """Plan this transaction's statements for their parameters: a search's plan depends on how common its
        text is, which a plan cached for any text cannot know."""

    def match_windows(self, conversation_ids: Sequence[str], needle: str, reach: int, width: int) -> Select[Any]:
        """(conversation id, position, window start, window) of each conversation's first match of ``needle``
        (at least), the window ``width`` characters from ``reach`` before it (positions count from 1)."""
