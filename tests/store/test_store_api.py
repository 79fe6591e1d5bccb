"""The store's public API is pinned: growing it is a visible decision."""

from __future__ import annotations

import core.store


def test_public_api_is_pinned() -> None:
    assert core.store.__all__ == sorted(core.store.__all__, key=lambda n: (not n.isupper(), n))
    assert set(core.store.__all__) == {
        "ENV_VAR", "MAX_ID_CHARS", "RUN_STATUSES", "SORTS", "ConversationDetail", "ConversationJSON",
        "ConversationPage",
        "ConversationQuery", "ConversationSummary", "EngineSettings", "ImportSummary", "InvalidQueryError",
        "NewRun", "RunStatus", "RunSummary", "RunView", "SchemaOutOfDate", "Store", "StoreError", "StoredMessage",
        "TokenUsage",
        "UpgradeResult", "ensure_schema", "head_revision", "make_engine", "resolve_url", "upgrade",
    }  # fmt: skip
    for name in core.store.__all__:
        assert hasattr(core.store, name)


def test_store_imports_nothing_from_web() -> None:
    """core never imports web (DESIGN.md): checked on the store's own sources."""
    from pathlib import Path

    for path in Path(core.store.__file__).parent.rglob("*.py"):
        text = path.read_text()
        assert "from web" not in text and "import web" not in text, path
