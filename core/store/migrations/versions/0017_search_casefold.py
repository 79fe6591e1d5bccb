"""PostgreSQL: search chunks folded with Unicode case folding (``core.store.casefold``), as SQLite's FTS5 folds.

Chunks written before were lowercased character by character, which leaves "ς" (final sigma), "ſ", "µ"
and about a hundred more as they are. Each such character is mapped to its fold in place (``translate``
keeps every character's place, as the fold does), in the chunks that hold one; the trigram index follows.
"""

from __future__ import annotations

import re

from alembic import op
from sqlalchemy import text

from core.store.casefold import fold_table

revision = "0017"
down_revision = "0016"


def _changed() -> tuple[str, str]:
    """(characters a chunk written before may hold whose fold is now another one, those folds), in order."""
    src, dst = [], []
    for point, folded in sorted(fold_table().items()):
        char = chr(point)
        lowered = char.lower()
        if lowered == char or len(lowered) != 1:  # only what the old fold left in place can be in a chunk
            src.append(char)
            dst.append(folded)
    return "".join(src), "".join(dst)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    src, dst = _changed()
    pattern = "[" + re.escape(src) + "]"
    conn.execute(
        text("UPDATE search_chunks SET folded = translate(folded, :src, :dst) WHERE folded ~ :pattern"),
        {"src": src, "dst": dst, "pattern": pattern},
    )


def downgrade() -> None:
    """Chunks stay folded: the older fold, searching them, misses only text holding these hundred characters."""
