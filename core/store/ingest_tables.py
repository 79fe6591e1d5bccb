"""The tables of API keys and live OTLP ingest (revision 0022): keys (their hashes only), received batches, the
spans they hold, and what was made of them.

They join the store's metadata when ``core.store`` is imported, like the accounts' tables.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlmodel import Field, SQLModel

from core.store.tables import table_of


class ApiKeyRow(SQLModel, table=True):
    """A key a program presents (``Authorization: Bearer tlk_...``): only its SHA-256 is kept (``core.store.api_keys``).

    ``scope`` is what it may do (ingest, read, write, admin); ``user_name`` the account it acts for, when accounts
    name one. Revoking keeps the row, so a listing still says who had which key and until when.
    """

    __tablename__ = "api_keys"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    scope: str = Field(sa_column=Column(String, nullable=False))
    key_hash: str = Field(sa_column=Column(String, nullable=False, unique=True))
    prefix: str = Field(sa_column=Column(String, nullable=False))
    """The key's first characters, enough to tell keys apart in a listing, never enough to use one."""
    user_name: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int | None = Field(default=None, sa_type=BigInteger)
    last_used_at: int | None = Field(default=None, sa_type=BigInteger)
    revoked_at: int | None = Field(default=None, sa_type=BigInteger)


class IngestBatchRow(SQLModel, table=True):
    """One ``POST /v1/traces`` request body as received (decompressed), stored before the request is answered.

    ``assembled_at`` is None while its spans wait for the assembly job (``core.ingest.assembly``).
    """

    __tablename__ = "ingest_batches"
    __table_args__ = (Index("ix_ingest_batches_pending", "assembled_at", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    received_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    key_pk: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True)
    )
    content_type: str = Field(sa_column=Column(String, nullable=False))
    spans: int = Field(sa_column=Column(Integer, nullable=False))
    assembled_at: int | None = Field(default=None, sa_type=BigInteger)
    body: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class IngestSpanRow(SQLModel, table=True):
    """Which batch holds which span (a span sent twice is in two batches): how a trace's spans are found again."""

    __tablename__ = "ingest_spans"
    __table_args__ = (Index("ix_ingest_spans_trace", "trace_id", "batch_pk"),)

    batch_pk: int = Field(
        sa_column=Column(
            Integer, ForeignKey("ingest_batches.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
        )
    )
    position: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    trace_id: str = Field(sa_column=Column(String, nullable=False))
    span_id: str = Field(sa_column=Column(String, nullable=False))


class IngestLinkRow(SQLModel, table=True):
    """What ties a trace to others into one conversation: a conversation key, or the opening of a keyless call."""

    __tablename__ = "ingest_links"
    __table_args__ = (Index("ix_ingest_links_link", "link", "trace_id"),)

    trace_id: str = Field(sa_column=Column(String, primary_key=True))
    link: str = Field(sa_column=Column(String, primary_key=True))


class IngestOutputRow(SQLModel, table=True):
    """The conversations a trace's spans were assembled into, so that a new assembly replaces them."""

    __tablename__ = "ingest_outputs"
    __table_args__ = (Index("ix_ingest_outputs_conversation", "conversation_id"),)

    trace_id: str = Field(sa_column=Column(String, primary_key=True))
    conversation_id: str = Field(sa_column=Column(String, primary_key=True))


class LiveConversationRow(SQLModel, table=True):
    """When a conversation last received spans over OTLP: live while that is recent."""

    __tablename__ = "live_conversations"

    conversation_id: str = Field(sa_column=Column(String, primary_key=True))
    last_received_at: int = Field(sa_column=Column(BigInteger, nullable=False))


API_KEYS = table_of(ApiKeyRow)
INGEST_BATCHES = table_of(IngestBatchRow)
INGEST_SPANS = table_of(IngestSpanRow)
INGEST_LINKS = table_of(IngestLinkRow)
INGEST_OUTPUTS = table_of(IngestOutputRow)
LIVE_CONVERSATIONS = table_of(LiveConversationRow)
