"""Column types shared by the store's table modules."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeEngine

JSON_COLUMN: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")
"""JSON text on SQLite, JSONB on PostgreSQL."""
