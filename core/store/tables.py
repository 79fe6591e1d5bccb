"""The store's tables, as SQLModel classes; the Alembic migrations create exactly these.

Times are integers in milliseconds since the epoch, the unit of ``create_ts``, so
every timestamp in the store compares with every other without time zones.
Bodies are JSON (JSONB on PostgreSQL). ``tests/store/test_store_schema.py`` checks
that the migrations and these classes agree. On PostgreSQL the rows derived from a message or a conversation
(outlines, texts, search pieces, kinds) have no foreign key: a trigger per statement deletes them with their
message or conversation (revision 0034).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from core.store.column_types import JSON_COLUMN as _JSON

MAX_ID_CHARS = 512
"""Longest ``msg_id``, ``conversation_id`` or ``run_id`` an import stores, in characters: 2,048 bytes of
UTF-8 at most, under PostgreSQL's B-tree limit of 2,704 bytes per index entry (past it the insert fails).
The same on SQLite, so a file means the same on both backends."""


def conversation_key() -> Column[int]:
    """The column naming the conversation a row belongs to: deleting the conversation deletes the row."""
    return Column(Integer, ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False)


class ConversationRow(SQLModel, table=True):
    """One conversation and the figures its list-page row shows, kept current by every import and run."""

    __tablename__ = "conversations"
    __table_args__ = (
        Index("ix_conversations_last_activity", "last_activity", "id"),
        Index("ix_conversations_first_ts", "first_ts", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    conversation_id: str = Field(sa_column=Column(String, nullable=False, unique=True))
    title: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    title_ts: int | None = Field(default=None, sa_type=BigInteger)
    messages: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    turns: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    records: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    damaged: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    runs: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    first_ts: int | None = Field(default=None, sa_type=BigInteger)
    last_activity: int | None = Field(default=None, sa_type=BigInteger)


class MessageRow(SQLModel, table=True):
    """One top-level message: its JSON exactly as imported (``body``), parsed again where a reader needs it typed.

    Its identity is ``(conversation_pk, msg_id)``: two conversations may use the same msg_id.
    """

    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_conversation_order", "conversation_pk", "create_ts", "id"),
        # Covers the content fingerprint's query (``core.store.digests``): it never reads the rows.
        Index("ix_messages_versions", "conversation_pk", "id", "imported_at", "records", "damaged"),
        UniqueConstraint("conversation_pk", "msg_id", name="uq_messages_conversation_msg_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    conversation_pk: int = Field(sa_column=conversation_key())
    msg_id: str = Field(sa_column=Column(String, nullable=False))
    role: str = Field(sa_column=Column(String, nullable=False))
    msg_type: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    kind: str = Field(sa_column=Column(String, nullable=False))
    create_ts: int = Field(sa_column=Column(BigInteger, nullable=False))
    records: int = Field(sa_column=Column(Integer, nullable=False))
    damaged: int = Field(sa_column=Column(Integer, nullable=False))
    body: dict[str, Any] = Field(sa_column=Column(_JSON, nullable=False))
    search_text: str = Field(sa_column=Column(Text, nullable=False))
    source: str = Field(sa_column=Column(String, nullable=False))
    line: int | None = Field(default=None, sa_column=Column(Integer, nullable=True))
    imported_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class MessageOutlineRow(SQLModel, table=True):
    """Where each trace record sits in a message's ``body`` text, and what placing it needs (``core.store.outline``).

    A table of its own, not a column of ``messages``: SQLite lays a row's columns end to end, so
    reading a column stored after a 16 MB body walks the body's overflow pages, as costly as reading
    the body. On SQLite the spans point into ``body``; on
    PostgreSQL, whose JSONB renders its own text, into the ``message_texts`` row written with it.
    A message without a row here (imported before revision 0003) is read whole.

    Keyed by the message's integer id, not its msg_id: the import appends rows in id order, one
    B-tree insert each, where a text key would also fill an index at random places.
    """

    __tablename__ = "message_outlines"

    message_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    )
    outline: str = Field(sa_column=Column(Text, nullable=False))


class MessageTextRow(SQLModel, table=True):
    """PostgreSQL only: a message's JSON text as the import wrote it, the text its outline's byte spans point into.

    ``body`` is JSONB, which keeps no text; this is stored uncompressed (``STORAGE EXTERNAL``, set by
    the migration), so ``substring`` of a span reads only the chunks that hold it.
    """

    __tablename__ = "message_texts"

    message_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    )
    text: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class MessageSearchPieceRow(SQLModel, table=True):
    """A piece after the first of a long message's searchable text (``core.store.search_pieces``, revision 0028).

    The first piece is ``messages.search_text``; these follow it, each overlapping the one before, so each is
    bound, indexed and searched alone. On SQLite the FTS5 table ``search_piece_fts`` indexes them by ``id``.
    """

    __tablename__ = "message_search_pieces"
    __table_args__ = (UniqueConstraint("message_pk", "seq", name="uq_message_search_pieces_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    message_pk: int = Field(sa_column=Column(Integer, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False))
    seq: int = Field(sa_column=Column(Integer, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))


class ConversationKindRow(SQLModel, table=True):
    """That a conversation contains at least one message of a kind (``user:image``, ``tool``...) at any depth."""

    __tablename__ = "conversation_kinds"
    __table_args__ = (Index("ix_conversation_kinds_kind", "kind", "conversation_pk"),)

    conversation_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    )
    kind: str = Field(sa_column=Column(String, primary_key=True))


class RunRow(SQLModel, table=True):
    """One replay of a conversation against a provider, stored whatever happened (bodies last: revision 0009)."""

    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_conversation", "conversation_pk", "started_at", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(sa_column=Column(String, nullable=False, unique=True))
    idempotency_key: str | None = Field(default=None, sa_column=Column(String, nullable=True, unique=True))
    conversation_pk: int = Field(sa_column=conversation_key())
    up_to_msg_id: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    provider: str = Field(sa_column=Column(String, nullable=False))
    model: str = Field(sa_column=Column(String, nullable=False))
    status: str = Field(sa_column=Column(String, nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    started_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    finished_at: int | None = Field(default=None, sa_type=BigInteger)
    latency_ms: int | None = Field(default=None, sa_type=BigInteger)
    input_tokens: int | None = Field(default=None)
    output_tokens: int | None = Field(default=None)
    total_tokens: int | None = Field(default=None)
    usage: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    reply: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    started_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The account that started the run; None when nobody was signed in (revision 0024)."""
    # Last: SQLite reaches a column by walking the ones before it, and a long trace's bodies are megabytes.
    request_body: dict[str, Any] = Field(sa_column=Column(_JSON, nullable=False))
    response_body: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))


class StepRunRow(SQLModel, table=True):
    """One step replay of a turn: the run's outcome and totals (``core.store.step_runs``); its steps apart."""

    __tablename__ = "step_runs"
    __table_args__ = (Index("ix_step_runs_conversation", "conversation_pk", "started_at", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(sa_column=Column(String, nullable=False, unique=True))
    idempotency_key: str | None = Field(default=None, sa_column=Column(String, nullable=True, unique=True))
    conversation_pk: int = Field(sa_column=conversation_key())
    turn_msg_id: str = Field(sa_column=Column(String, nullable=False))
    provider: str = Field(sa_column=Column(String, nullable=False))
    model: str = Field(sa_column=Column(String, nullable=False))
    status: str = Field(sa_column=Column(String, nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    diverged_at: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    recorded_steps: int = Field(sa_column=Column(Integer, nullable=False))
    max_steps: int = Field(sa_column=Column(Integer, nullable=False))
    max_cost: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    started_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    finished_at: int | None = Field(default=None, sa_type=BigInteger)
    comparison: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """How final answers were judged (``core.replay.answers``); None for a run recorded before it was chosen."""
    tools_source: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """Where the tools sent came from (``core.providers.ToolsSource``); None for a run recorded before."""
    tools: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    """The tools every step sent, neutral (name, description, parameters)."""
    tool_choice: Any = Field(default=None, sa_column=Column(_JSON, nullable=True))
    """The tool choice every step sent, neutral (``auto``, ``none``, ``required`` or ``{"name": ...}``)."""
    started_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The account that started the run; None when nobody was signed in (revision 0024)."""
    params: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    """The generation parameters given for the run over the stored request, by name (revision 0027)."""


class StepRow(SQLModel, table=True):
    """One step of a step run: what was sent and answered, its verdict against the recorded step, tokens, cost."""

    __tablename__ = "step_run_steps"
    __table_args__ = (UniqueConstraint("step_run_pk", "position", name="uq_step_run_steps_position"),)

    id: int | None = Field(default=None, primary_key=True)
    step_run_pk: int = Field(sa_column=Column(Integer, ForeignKey("step_runs.id", ondelete="CASCADE"), nullable=False))
    position: int = Field(sa_column=Column(Integer, nullable=False))
    recorded_msg_id: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    verdict: str = Field(sa_column=Column(String, nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    detail: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    status: str = Field(sa_column=Column(String, nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    request_body: dict[str, Any] = Field(sa_column=Column(_JSON, nullable=False))
    response_body: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    reply: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    latency_ms: int | None = Field(default=None, sa_type=BigInteger)
    input_tokens: int | None = Field(default=None)
    output_tokens: int | None = Field(default=None)
    cached_tokens: int | None = Field(default=None)
    reasoning_tokens: int | None = Field(default=None)
    cost_usd: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    cost_note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    estimate: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))


class JobRow(SQLModel, table=True):
    """One queued job of the in-process queue (``core.jobs.local``): its task, arguments and where it stands.

    A running job's ``lease_until`` is renewed by its worker; past it, another worker takes the job back.
    PostgreSQL stores its jobs in Procrastinate's tables instead; this table stays empty there.
    """

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_status", "status", "run_after", "id"),
        Index("ix_jobs_lock", "lock"),
        Index("ix_jobs_lane", "status", "lane", "run_after"),
    )

    id: int | None = Field(default=None, primary_key=True)
    task: str = Field(sa_column=Column(String, nullable=False))
    args: dict[str, Any] = Field(sa_column=Column(_JSON, nullable=False))
    provider: str = Field(sa_column=Column(String, nullable=False))
    lock: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    status: str = Field(sa_column=Column(String, nullable=False))
    attempts: int = Field(sa_column=Column(Integer, nullable=False))
    max_attempts: int = Field(sa_column=Column(Integer, nullable=False))
    run_after: int = Field(sa_column=Column(BigInteger, nullable=False))
    lease_until: int | None = Field(default=None, sa_type=BigInteger)
    worker: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    finished_at: int | None = Field(default=None, sa_type=BigInteger)
    lane: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """Jobs of one lane run one at a time, oldest first (a suite run's concurrency)."""


class AppSecretRow(SQLModel, table=True):
    """A secret the dashboard's processes share (the CSRF signing key): made once, by whichever process asks first.

    Never shown: not in a page, a log line or a repr (``core.store.app_secrets``).
    """

    __tablename__ = "app_secrets"

    name: str = Field(sa_column=Column(String, primary_key=True))
    value: str = Field(sa_column=Column(Text, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class SuiteRow(SQLModel, table=True):
    """A named set of conversations (``core.suites``) and the filter that chose them."""

    __tablename__ = "suites"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String, nullable=False, unique=True))
    filter: dict[str, Any] = Field(sa_column=Column(_JSON, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))


class SuiteMemberRow(SQLModel, table=True):
    """One conversation of a suite, fixed when the suite was made; ``position`` keeps the list's order."""

    __tablename__ = "suite_members"
    __table_args__ = (UniqueConstraint("suite_pk", "conversation_pk", name="uq_suite_members_conversation"),)

    suite_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("suites.id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    )
    position: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    conversation_pk: int = Field(sa_column=conversation_key())


class SuiteRunRow(SQLModel, table=True):
    """One replay of every conversation of a suite; its outcomes and totals are summed from its items."""

    __tablename__ = "suite_runs"
    __table_args__ = (Index("ix_suite_runs_suite", "suite_pk", "created_at", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(sa_column=Column(String, nullable=False, unique=True))
    idempotency_key: str | None = Field(default=None, sa_column=Column(String, nullable=True, unique=True))
    """The dashboard form's key: the same key twice, from any process, is this one run."""
    suite_pk: int = Field(sa_column=Column(Integer, ForeignKey("suites.id", ondelete="CASCADE"), nullable=False))
    provider: str = Field(sa_column=Column(String, nullable=False))
    model: str = Field(sa_column=Column(String, nullable=False))
    mode: str = Field(sa_column=Column(String, nullable=False))
    concurrency: int = Field(sa_column=Column(Integer, nullable=False))
    max_cost: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    baseline_pk: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("suite_runs.id", ondelete="SET NULL"), nullable=True)
    )
    status: str = Field(sa_column=Column(String, nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    finished_at: int | None = Field(default=None, sa_type=BigInteger)
    comparison: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """How final answers were judged (``core.replay.answers``); None for a run recorded before it was chosen."""
    started_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """The account that started the run; None when nobody was signed in (revision 0024)."""


class SuiteRunItemRow(SQLModel, table=True):
    """One conversation of a suite run: its outcome, where it diverged, the replay it made, tokens, cost, time."""

    __tablename__ = "suite_run_items"
    __table_args__ = (
        UniqueConstraint("suite_run_pk", "conversation_pk", name="uq_suite_run_items_conversation"),
        Index("ix_suite_run_items_outcome", "suite_run_pk", "outcome"),
    )

    id: int | None = Field(default=None, primary_key=True)
    suite_run_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("suite_runs.id", ondelete="CASCADE"), nullable=False)
    )
    conversation_pk: int = Field(sa_column=conversation_key())
    position: int = Field(sa_column=Column(Integer, nullable=False))
    outcome: str = Field(sa_column=Column(String, nullable=False))
    attempt: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    diverged_step: int | None = Field(default=None)
    diverged_at: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    run_id: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """The replay this item made: a ``runs`` row in ``final`` mode, a ``step_runs`` row in ``steps`` mode."""
    input_tokens: int | None = Field(default=None)
    output_tokens: int | None = Field(default=None)
    cost_usd: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    cost_note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    started_at: int | None = Field(default=None, sa_type=BigInteger)
    finished_at: int | None = Field(default=None, sa_type=BigInteger)
    wall_ms: int | None = Field(default=None, sa_type=BigInteger)
    detail: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    """The final answers' comparison: its name, score, word diff and a judge's verdict (None when none was made)."""


class RequestContextRow(SQLModel, table=True):
    """What a conversation's requests (``turn`` None) or one turn's carried besides the messages
    (``core.request_context``): the tools offered, the tool choice, provider, model, generation parameters.

    ``tools``, ``tool_choice`` and ``params`` hold the neutral JSON, whatever shape the imported line gave.
    """

    __tablename__ = "request_contexts"
    __table_args__ = (UniqueConstraint("conversation_pk", "turn", name="uq_request_contexts_turn"),)

    id: int | None = Field(default=None, primary_key=True)
    conversation_pk: int = Field(
        sa_column=Column(Integer, ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False)
    )
    turn: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    """The user message that opens the turn; None: the whole conversation."""
    provider: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    model: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    tools: list[Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    tool_choice: str | dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    params: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))


def table_of(model: type[SQLModel]) -> Table:
    """The SQLAlchemy table of a ``table=True`` model."""
    table = model.__table__  # type: ignore[attr-defined]  # SQLModel sets it at class creation; untyped
    assert isinstance(table, Table)
    return table


CONVERSATIONS = table_of(ConversationRow)
MESSAGES = table_of(MessageRow)
MESSAGE_OUTLINES = table_of(MessageOutlineRow)
MESSAGE_TEXTS = table_of(MessageTextRow)
MESSAGE_SEARCH_PIECES = table_of(MessageSearchPieceRow)
CONVERSATION_KINDS = table_of(ConversationKindRow)
RUNS = table_of(RunRow)
STEP_RUNS = table_of(StepRunRow)
STEPS = table_of(StepRow)
JOBS = table_of(JobRow)
APP_SECRETS = table_of(AppSecretRow)
SUITES = table_of(SuiteRow)
SUITE_MEMBERS = table_of(SuiteMemberRow)
SUITE_RUNS = table_of(SuiteRunRow)
SUITE_RUN_ITEMS = table_of(SuiteRunItemRow)
REQUEST_CONTEXTS = table_of(RequestContextRow)
METADATA = SQLModel.metadata
