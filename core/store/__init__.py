"""The store: conversations, messages and runs in SQLite (default) or PostgreSQL, behind one repository.

``Store.open(url)`` is the entry point; see ``core.store.repository``. Import is
all-or-nothing per file and idempotent by msg_id; export gives back every key
that was imported.
"""

from core.store import account_tables as account_tables  # its tables join the store's metadata
from core.store import digests as digests  # so do these
from core.store import ingest_tables as ingest_tables  # so do these
from core.store.engine import ENV_VAR, EngineSettings, make_engine, resolve_url
from core.store.errors import InvalidQueryError, SchemaOutOfDate, StoreError
from core.store.query import SORTS, ConversationQuery
from core.store.repository import Store
from core.store.schema import UpgradeResult, ensure_schema, head_revision, upgrade
from core.store.tables import MAX_ID_CHARS
from core.store.views import (
    RUN_STATUSES,
    ConversationDetail,
    ConversationJSON,
    ConversationPage,
    ConversationSummary,
    ImportSummary,
    NewRun,
    RunStatus,
    RunSummary,
    RunView,
    StoredMessage,
    TokenUsage,
)

__all__ = [
    "ENV_VAR",
    "MAX_ID_CHARS",
    "RUN_STATUSES",
    "SORTS",
    "ConversationDetail",
    "ConversationJSON",
    "ConversationPage",
    "ConversationQuery",
    "ConversationSummary",
    "EngineSettings",
    "ImportSummary",
    "InvalidQueryError",
    "NewRun",
    "RunStatus",
    "RunSummary",
    "RunView",
    "SchemaOutOfDate",
    "Store",
    "StoreError",
    "StoredMessage",
    "TokenUsage",
    "UpgradeResult",
    "ensure_schema",
    "head_revision",
    "make_engine",
    "resolve_url",
    "upgrade",
]
