"""One conversation's figures, several by id, and where a search matched: read through the Store, on both backends."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from core.errors import UnknownNameError
from core.reader import read_bytes
from core.store import Store


def _import(store: Store, messages: list[dict[str, Any]]) -> None:
    store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="s"), source="s")


def _text(cid: str, content: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "msg_type": "text", "content": content, "create_ts": ts, "msg_id": f"{cid}-{ts}",
            "conversation_id": cid}  # fmt: skip


def test_a_summary_is_read_by_id_and_an_unknown_id_is_named(store: Store) -> None:
    _import(store, [_text("a", "hello", 1), _text("a", "again", 2)])
    assert store.get_summary("a").messages == 2
    with pytest.raises(UnknownNameError, match="'nope'"):
        store.get_summary("nope")


def test_summaries_by_id_leave_out_the_ids_not_stored(store: Store) -> None:
    _import(store, [_text(f"c{i}", f"text {i}", i) for i in range(3)])
    found = store.get_summaries(["c2", "gone", "c0", "c2"])
    assert sorted(found) == ["c0", "c2"]
    assert found["c0"].conversation_id == "c0"


def test_a_match_window_holds_the_first_match_with_its_surroundings(store: Store) -> None:
    _import(store, [_text("m", "x" * 500 + " the NEEDLE here " + "y" * 500, 1), _text("other", "nothing", 2)])
    found = store.match_windows(["m", "other"], "needle", 20)
    assert list(found) == ["m"]
    window = found["m"]
    assert window.text[window.offset : window.offset + window.length] == "NEEDLE"
    assert window.begun and window.full
    assert store.match_windows(["m"], "  ", 20) == {}
