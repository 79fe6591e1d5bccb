"""A digest fill stopped half way (the process killed) resumes after a restart: the parts already stored are kept
and not made again, the missing ones are made, and the whole is what a fill in one go stores."""

from __future__ import annotations

from typing import Any

import pytest

from core.store import Store
from core.store import digests as stored
from tests.web.web_corpus import long_trace, temp_store
from web.bodies.asked import DiffLinks
from web.bodies.builder import PayloadBuilder
from web.bodies.diffs import diff_digest
from web.bodies.requests import AskedRequest, body_chunks, body_view, payload_digest
from web.bodies.windows import Layout
from web.source import StoreSource

CID = "c-resume"
ASKED = AskedRequest(CID, "openai", None, False, None)
DIFF = DiffLinks(CID, "openai", "anthropic", None, False)
LONG = 1_500
"""Records of the trace: a body of ten windows, so a fill stopped after two parts leaves most of them to make."""


class Killed(Exception):
    """The process stopped while it wrote the digest's parts."""


@pytest.fixture
def store() -> Store:
    return temp_store(long_trace(LONG, conversation_id=CID))  # type: ignore[arg-type]


def _killed_after(monkeypatch: pytest.MonkeyPatch, parts: int) -> pytest.MonkeyPatch:
    """``write_part`` stops the process after ``parts`` parts (the digest's head and first parts were written)."""
    real = stored.write_part
    written = [0]

    def write(*args: Any) -> None:
        if written[0] == parts:
            raise Killed
        written[0] += 1
        real(*args)

    monkeypatch.setattr(stored, "write_part", write)
    return monkeypatch


def _counting_renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The windows rendered from now on (each a part made), by number."""
    seen: list[int] = []
    real = Layout.render

    def counting(self: Layout, n: int, marks: Any) -> Any:
        seen.append(n)
        return real(self, n, marks)

    monkeypatch.setattr(Layout, "render", counting)
    return seen


def _parts(store: Store, name: str) -> set[int]:
    """The numbers of the stored parts of ``name`` (one digest in the store)."""
    with store.engine.connect() as conn:
        rows = conn.execute(stored.DIGEST_PARTS.select().where(stored.DIGEST_PARTS.c.part == name)).all()
    return {row.n for row in rows}


def test_a_payload_digest_stopped_half_way_resumes_with_the_windows_it_lacks(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _killed_after(monkeypatch, 2)
    with pytest.raises(Killed):
        payload_digest(StoreSource(store), PayloadBuilder(None), ASKED, every_window=True)
    kept = _parts(store, "w")
    assert kept == {0, 1, 2}  # the first window with the head, then two more before the stop
    monkeypatch.undo()
    seen = _counting_renders(monkeypatch)
    source, payloads = StoreSource(store), PayloadBuilder(None)  # a restart: nothing held in memory
    digest = payload_digest(source, payloads, ASKED, every_window=True)
    assert digest.head.plan is not None and digest.head.plan.count > 4
    assert sorted(seen) == sorted(set(range(digest.head.plan.count)) - kept)  # only the missing windows made
    assert _parts(store, "w") == set(range(digest.head.plan.count))
    view = body_view(payloads, payloads.build(source.load(CID), "openai"))
    assert b"".join(digest.texts()) == b"".join(body_chunks(view.layout, view.marks))


def test_a_diff_digest_stopped_half_way_resumes_with_the_parts_it_lacks(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _killed_after(monkeypatch, 3)
    with pytest.raises(Killed):
        diff_digest(StoreSource(store), PayloadBuilder(None), DIFF, every_window=True)
    kept = {side: _parts(store, side) for side in ("L", "R")}
    monkeypatch.undo()
    seen = _counting_renders(monkeypatch)
    digest = diff_digest(StoreSource(store), PayloadBuilder(None), DIFF, every_window=True)
    plans = {"L": digest.head.left_plan, "R": digest.head.right_plan}
    missing = 0
    for side, plan in plans.items():
        assert plan is not None
        assert _parts(store, side) == set(range(plan.count))
        missing += plan.count - len(kept[side])
    assert 0 < len(seen) == missing  # only the windows the stopped fill had not stored
    once = temp_store(long_trace(LONG, conversation_id=CID))  # type: ignore[arg-type]
    diff_digest(StoreSource(once), PayloadBuilder(None), DIFF, every_window=True)
    whole = diff_digest(StoreSource(once), PayloadBuilder(None), DIFF)  # read back from the store
    for side in ("left", "right"):
        for n in range(plans["L" if side == "left" else "R"].count):  # type: ignore[union-attr]
            assert digest.window(side, n) == whole.window(side, n)
