"""The payload and diff pages' digests: a stored digest gives the page a fresh build gives, and is never stale."""

from __future__ import annotations

import re
import time
from html import unescape

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import select

from core import MESSAGE_ADAPTER
from core.store import Store
from core.store import digests as stored
from tests.web.web_corpus import BASE_URL, csrf_cookie, import_messages, long_trace, temp_store
from tests.web.web_html import every_window_url, window_count
from web import app as web_app
from web import digest_key
from web.bodies import digest_task
from web.bodies.builder import PayloadBuilder, providers
from web.bodies.facts import unpack
from web.settings import Settings
from web.source import StoreSource

CID = "c-dig"
PAGE = f"/conversations/{CID}/payload/openai"
DIFF = f"/conversations/{CID}/diff?left=openai&right=anthropic"
SECRET = "sk-proj-" + "Z9y8X7w6" * 6
LONG = 1_500
"""Records of a long trace: a body of ten windows and a diff with a cause of more changes than one listing shows."""


def _secret_message(msg_id: str = "s-u", text: str = f"key {SECRET}") -> object:
    return MESSAGE_ADAPTER.validate_python(
        {"role": "user", "msg_type": "text", "msg_id": msg_id, "conversation_id": CID, "content": text,
         "create_ts": 1_800_000_000_000}
    )  # fmt: skip


@pytest.fixture
def store() -> Store:
    return temp_store([*long_trace(LONG, conversation_id=CID), _secret_message()])  # type: ignore[list-item]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The providers built from the conversation's messages, in order (a digest read or a kept build is none)."""
    seen: list[str] = []
    real = PayloadBuilder._build

    def counting(self: PayloadBuilder, messages: object, provider: str, *args: object) -> object:
        seen.append(provider)
        return real(self, messages, provider, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(PayloadBuilder, "_build", counting)
    return seen


def _client(store: Store) -> TestClient[Litestar]:
    return TestClient(web_app.create_app(Settings(heavy_budget_seconds=600), StoreSource(store)), base_url=BASE_URL)


def _get(store: Store, *urls: str) -> list[bytes]:
    """Each URL's body, asked of an app made for it (its caches empty)."""
    out = []
    with _client(store) as client:
        for url in urls:
            response = client.get(url, headers={"HX-Request": "true"} if "/window" in url or "/changes" in url else {})
            assert response.status_code == 200, (url, response.text[:300])
            out.append(response.content)
        assert client.app.state.backlog.wait_idle(120)  # the rest of each digest it started, made after the answer
    return out


PER_REQUEST = re.compile(rb'("x-csrftoken": "|name="_csrf_token" value="|name="idempotency_key" value=")[^"]*')


def _page(body: bytes) -> bytes:
    """A page with its per-request values (the CSRF token, the forms' idempotency keys) blanked."""
    return PER_REQUEST.sub(rb"\1-", body)


def _window_urls(html: str) -> list[str]:
    return [unescape(u) for u in re.findall(r'hx-get="([^"]*/window\?[^"]*)"', html)]


def test_a_stored_payload_digest_gives_the_page_and_windows_a_fresh_build_gives_byte_for_byte(
    store: Store, builds: list[str]
) -> None:
    (fresh,) = _get(store, PAGE)
    assert builds == ["openai"] and stored.count_digests(store.engine, CID, "payload") == 1
    windows = _window_urls(fresh.decode())
    assert len(windows) >= 2
    middle = windows[len(windows) // 2]
    hit, window_hit, map_hit = _get(store, PAGE, middle, f"{PAGE}/windows")
    assert builds == ["openai"]  # the page, a later window and the map all read from the store
    assert _page(hit) == _page(fresh)
    with stored_digests_dropped(store):
        window_fresh, map_fresh = _get(store, middle, f"{PAGE}/windows")
    assert (window_hit, map_hit) == (window_fresh, map_fresh)


def test_the_first_page_leaves_the_rest_of_its_digest_made_from_the_same_build(store: Store, builds: list[str]) -> None:
    """Every window is stored after the first answer, so a reader scrolling a long trace never makes it rebuild."""
    (fresh,) = _get(store, PAGE)
    with store.engine.connect() as conn:
        (key,) = conn.execute(select(stored.DIGESTS.c.key).where(stored.DIGESTS.c.kind == "payload")).scalars()
    assert stored.part_numbers(store.engine, key, "w") == set(range(window_count(fresh.decode())))
    assert builds == ["openai"]


def test_a_stored_diff_digest_gives_the_page_windows_and_listings_a_fresh_build_gives(
    store: Store, builds: list[str]
) -> None:
    (fresh,) = _get(store, DIFF)
    assert sorted(builds) == ["anthropic", "openai"]
    html = fresh.decode()
    window = _window_urls(html)[-1]
    more = [unescape(u) for u in re.findall(r'hx-get="([^"]*/diff/changes\?[^"]*)"', html)]
    assert more, "a cause with more changes than a listing"
    hit, window_hit, more_hit = _get(store, DIFF, window, more[0])
    assert sorted(builds) == ["anthropic", "openai"]  # the rest of the digest was made from the first builds
    assert _page(hit) == _page(fresh)
    with stored_digests_dropped(store):
        window_fresh, more_fresh = _get(store, window, more[0])
    assert (window_hit, more_hit) == (window_fresh, more_fresh)


def test_the_background_fill_stores_every_window_a_page_would_build(store: Store, builds: list[str]) -> None:
    (fresh,) = _get(store, PAGE)
    last = _window_urls(fresh.decode())[-1]
    (window_fresh,) = _get(store, last)
    with stored_digests_dropped(store):
        digest_task.fill_digests(store, CID)
    made = len(builds)
    page, window_hit = _get(store, PAGE, last)
    assert len(builds) == made  # nothing built: every window came from the store
    assert (_page(page), window_hit) == (_page(fresh), window_fresh)


class stored_digests_dropped:
    """Every stored digest deleted on entry: what is asked inside is built fresh."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> None:
        with self.store.engine.begin() as conn:
            conn.execute(stored.DIGEST_PARTS.delete())
            conn.execute(stored.DIGESTS.delete())

    def __exit__(self, *_: object) -> None:
        return None


def test_new_content_in_the_conversation_is_never_served_from_an_old_digest(store: Store, builds: list[str]) -> None:
    _get(store, PAGE)
    import_messages(store, [_secret_message("s-later", "a later question about zebras")], source="later.jsonl")  # type: ignore[list-item]
    (page,) = _get(store, PAGE)
    assert builds == ["openai", "openai"]
    (last,) = _get(store, every_window_url(page.decode())[-1])  # the new message ends the body
    assert b"zebras" in last
    assert stored.count_digests(store.engine, CID) == 1  # the stale digest was dropped


def test_another_traceloupe_version_builds_its_own_digest(
    store: Store, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (before,) = _get(store, PAGE)
    monkeypatch.setattr(digest_key, "traceloupe_version", lambda: "99.0.0")
    (after,) = _get(store, PAGE)
    assert builds == ["openai", "openai"]
    assert _page(after) == _page(before) and stored.count_digests(store.engine, CID) == 1


def test_a_digest_holds_no_key_from_the_trace(store: Store) -> None:
    _get(store, PAGE, DIFF)
    with store.engine.connect() as conn:
        blobs = [*conn.execute(stored.DIGESTS.select().with_only_columns(stored.DIGESTS.c.head)).scalars()]
        blobs += conn.execute(stored.DIGEST_PARTS.select().with_only_columns(stored.DIGEST_PARTS.c.data)).scalars()
    texts = [repr(unpack(blob)) for blob in blobs]
    assert any("masked" in text for text in texts)
    assert not any(SECRET in text for text in texts)


def test_an_import_of_a_large_conversation_fills_its_digests_in_the_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The threshold is lowered to a small trace's size: what is pinned is that an import past it fills every
    # digest, which a body of one window shows as well as one of ten.
    monkeypatch.setattr(digest_task, "DIGEST_MIN_RECORDS", 40)
    store = temp_store()
    body = b"".join(
        MESSAGE_ADAPTER.dump_json(m) + b"\n" for m in [*long_trace(60, conversation_id=CID), _secret_message()]
    )
    with _client(store) as client:
        client.get("/import")
        token = csrf_cookie(client.cookies)
        response = client.post("/import", files=[("files", ("big.jsonl", body))], data={"_csrf_token": token})
        assert response.status_code == 200, response.text[:300]
        expected = len(providers()) + 1  # each provider's payload page and the default diff
        deadline = time.monotonic() + 300
        while stored.count_digests(store.engine, CID) < expected and time.monotonic() < deadline:
            time.sleep(0.2)
    assert stored.count_digests(store.engine, CID, "payload") == len(providers())
    assert stored.count_digests(store.engine, CID, "diff") == 1


def test_a_small_conversation_queues_no_digest_job(monkeypatch: pytest.MonkeyPatch) -> None:
    store = temp_store([_secret_message()])  # type: ignore[list-item]
    queued: list[str] = []

    class Queue:
        def enqueue(self, task: str, args: object, *, provider: str, lock: str | None = None) -> str:
            queued.append(task)
            return "1"

    assert digest_task.queue_digests(Queue(), StoreSource(store), [CID], None) == []  # type: ignore[arg-type]
    monkeypatch.setattr(digest_task, "DIGEST_MIN_RECORDS", 0)
    assert digest_task.queue_digests(Queue(), StoreSource(store), [CID], None) == [CID]  # type: ignore[arg-type]
    assert queued == [digest_task.DIGEST_TASK]


def test_a_conversation_whose_pages_are_whole_leaves_nothing_for_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short conversation's first page stores its whole digest: no background work is queued that could crowd
    out a long trace's (the backlog takes a bounded number of pieces)."""
    short = temp_store([_secret_message()])  # type: ignore[list-item]
    long = temp_store([*long_trace(LONG, conversation_id=CID), _secret_message()])  # type: ignore[list-item]
    queued: list[object] = []
    real = web_app.Backlog.submit

    def counting(self: object, key: object, work: object) -> bool:
        queued.append(key)
        return real(self, key, work)  # type: ignore[arg-type]

    monkeypatch.setattr(web_app.Backlog, "submit", counting)
    _get(short, PAGE, DIFF)
    assert queued == []
    _get(long, PAGE, DIFF)
    assert {key[0] for key in queued} == {"payload", "diff"}  # type: ignore[index]
