"""Type-loss of one record, as a card shows it: a thin view over ``core.integrity``.

The timeline asks one question through one function, :func:`inspect_record`; detection, inference and
the report a card shows (:class:`core.integrity.Damage`) live in core alone.
"""

from __future__ import annotations

from core import Message
from core.integrity import Damage, find_damage, is_damaged


def inspect_record(message: Message, path: str = "$") -> Damage | None:
    """The damage of this record itself (not of records inside it), or None when its type survived."""
    if not is_damaged(message):
        return None
    return find_damage(message, path)[0]  # the record itself comes first, then anything nested in it
