"""The conversation list: keyset pages, sorts, filters and substring search, on both backends."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import event

from core.reader import read_bytes
from core.store import SORTS, ConversationQuery, InvalidQueryError, NewRun, Store
from core.store.pg_search import MAX_NEEDLE, STRIDE
from tests.store.store_factory import dataset


def _import(store: Store, messages: list[dict[str, Any]]) -> None:
    store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="q"), source="q")


def _text(cid: str, content: str, ts: int, **extra: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "msg_type": "text",
        "content": content,
        "create_ts": ts,
        "msg_id": f"{cid}-{ts}",
        "conversation_id": cid,
        **extra,
    }


@pytest.mark.parametrize("sort", sorted(SORTS))
def test_pages_cover_every_conversation_once_in_order(store: Store, sort: str) -> None:
    _import(store, dataset(seed=21, conversations=23, turns=1, records=3))
    seen: list[Any] = []
    cursor = None
    while True:
        page = store.list_conversations(ConversationQuery(sort=sort, limit=5, cursor=cursor))
        seen.extend(page.items)
        assert len(page.items) <= 5
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == 23 == len({c.conversation_id for c in seen})
    key = {
        "recent": lambda c: -c.last_activity,
        "oldest": lambda c: c.first_ts,
        "newest": lambda c: -c.first_ts,
        "damaged": lambda c: -c.damaged,
    }[sort]
    values = [key(c) for c in seen]
    assert values == sorted(values)


def test_search_is_a_case_insensitive_substring_match(store: Store) -> None:
    _import(
        store,
        [
            _text("en", "Where is the Cat hiding?", 1),
            _text("zh", "请帮我查一下北京的天气", 2),
            _text(
                "tool",
                "plain",
                3,
                intermediate_trace={
                    "records": [
                        {"role": "tool", "tool_reses": ["needle in a tool result"], "create_ts": 4, "msg_id": "t-4"}
                    ]
                },
            ),
            _text("short", "ab", 5),
        ],
    )

    def found(text: str) -> set[str]:
        return {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=text))}

    assert found("the cAT") == {"en"}
    assert found("北京的") == {"zh"}
    assert found("京") == {"zh"}  # shorter than a trigram: a scan, same answer
    assert found("needle in") == {"tool"}  # trace records are searched too
    assert found("ab") == {"short"}
    assert found("  cat hid ") == {"en"}  # trimmed
    assert found("dog") == set()
    assert found("") == {"en", "zh", "tool", "short"}


def test_search_matches_conversation_ids_and_titles_too(store: Store) -> None:
    _import(
        store,
        [
            _text("INC-4711/payments", "the card was charged twice", 1),
            _text("École-42", "bonjour", 2),
            _text("100%_done", "finished", 3),
            _text("plain", "Refund\n\n   for   order 42, please", 4),  # its title: "Refund for order 42, please"
        ],
    )

    def found(text: str) -> set[str]:
        return {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=text))}

    assert found("inc-4711") == {"INC-4711/payments"}
    assert found("4711/PAY") == {"INC-4711/payments"}
    assert found("47") == {"INC-4711/payments"}  # shorter than a trigram
    assert found("éc") == {"École-42"}
    assert found("%_") == {"100%_done"}  # LIKE's wildcards are literal
    assert found("refund for order") == {"plain"}  # as the list shows its title, spaces collapsed
    assert found("42") == {"École-42", "plain"}


def test_filters(store: Store) -> None:
    _import(
        store,
        [
            _text("plain", "hello", 1),
            {
                "role": "user",
                "msg_type": "image",
                "content": "https://e.com/x.png",
                "create_ts": 2,
                "msg_id": "img",
                "conversation_id": "image",
            },
            {"role": "assistant", "content": "bare", "create_ts": 3, "msg_id": "dmg", "conversation_id": "damaged"},
            _text(
                "deep",
                "q",
                4,
                intermediate_trace={
                    "records": [{"role": "console", "content": "out", "create_ts": 5, "msg_id": "con"}]
                },
            ),
        ],
    )
    store.start_run(NewRun("plain", provider="openai", model="m", request_body={}))

    def ids(**kw: Any) -> set[str]:
        found = {c.conversation_id for c in store.iter_conversations(ConversationQuery(**kw))}
        assert store.count_conversations(ConversationQuery(**kw), cap=100) == len(found)
        return found

    assert ids(has_damaged=True) == {"damaged"}
    assert ids(has_damaged=False) == {"plain", "image", "deep"}
    assert ids(has_runs=True) == {"plain"}
    assert ids(has_runs=False) == {"image", "damaged", "deep"}
    assert ids(kind="user:image") == {"image"}
    assert ids(kind="console") == {"deep"}  # nested in a trace
    assert ids(kind="assistant") == {"damaged"}  # a bare assistant record's kind is its role
    assert ids(kind="user:text", has_runs=True) == {"plain"}
    assert ids(kind="no-such-kind") == set()


def test_a_count_is_counted_in_the_query_and_stops_at_its_cap(store: Store) -> None:
    _import(store, [_text(f"c{n}", f"shared words {n}", n) for n in range(30)] + [_text("other", "apart", 99)])
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    assert store.count_conversations(ConversationQuery(search="SHARED words"), cap=1000) == 30
    counts = [s for s in statements if "count(" in s.lower()]
    assert 1 <= len(counts) <= 3  # walks in the list's order, then the indexes when they found fewer than the cap
    assert all("LIMIT" in s for s in counts)
    assert store.count_conversations(ConversationQuery(search="shared words"), cap=7) == 7
    assert store.count_conversations(ConversationQuery(search="shared\x00"), cap=7) == 0
    assert store.count_conversations(ConversationQuery(), cap=1000) == 31


@pytest.mark.parametrize(
    "query",
    [
        ConversationQuery(sort="id; DROP TABLE conversations"),
        ConversationQuery(sort="title"),
        ConversationQuery(limit=0),
        ConversationQuery(limit=10_000),
        ConversationQuery(cursor="not a cursor"),
        ConversationQuery(cursor="WyJvbGRlc3QiLDEsMV0"),  # a valid cursor of another sort
    ],
)
def test_bad_sort_limit_or_cursor_is_refused(store: Store, query: ConversationQuery) -> None:
    with pytest.raises(InvalidQueryError):
        store.list_conversations(query)


def _cursor(*items: Any) -> str:
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(list(items)).encode()).decode().rstrip("=")


OUT_OF_RANGE_CURSORS = {
    "value 2^63": lambda sort: _cursor(sort, 2**63, 1),
    "id 2^63": lambda sort: _cursor(sort, 1, 2**63),
    "value -2^63-1": lambda sort: _cursor(sort, -(2**63) - 1, 1),
    "id 2^64": lambda sort: _cursor(sort, 1, 2**64),
    "id 2^31": lambda sort: _cursor(sort, 1, 2**31),
    "float": lambda sort: _cursor(sort, 1.5, 1),
    "not base64": lambda sort: "%%%",
    "not utf-8": lambda sort: "__8",
}


@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE_CURSORS))
def test_integer_overflow_in_a_cursor_is_a_bad_query_not_a_crash(store: Store, case: str) -> None:
    """Integer overflow through a forged page cursor: refused as bad input on both backends."""
    _import(store, [_text("a", "x", 1), _text("b", "y", 2)])
    store.start_run(NewRun("a", provider="openai", model="m", request_body={}))
    with pytest.raises(InvalidQueryError, match="cursor"):
        store.list_conversations(ConversationQuery(sort="recent", cursor=OUT_OF_RANGE_CURSORS[case]("recent")))
    with pytest.raises(InvalidQueryError, match="cursor"):
        store.list_runs(cursor=OUT_OF_RANGE_CURSORS[case]("runs"))
    with pytest.raises(InvalidQueryError, match="cursor"):
        store.list_runs("a", cursor=OUT_OF_RANGE_CURSORS[case]("runs"))


@pytest.mark.parametrize(
    ("needle", "found_in"),
    [
        ("é", "fr"),
        ("É", "fr"),
        ("éc", "fr"),
        ("éco", "fr"),
        ("ß", "de"),
        ("ДО", "ru"),
        ("до", "ru"),
        ("Σ", "el"),
        ("σ", "el"),
        ("京", "zh"),
    ],
)
def test_search_folds_case_beyond_ascii_at_any_length(store: Store, needle: str, found_in: str) -> None:
    """Search evasion by letter case: a one- or two-letter non-ASCII needle matches either case on both backends."""
    _import(
        store,
        [
            _text("fr", "École du soir", 1),
            _text("de", "Straße", 2),
            _text("ru", "Добрый день", 3),
            _text("el", "ΣΟΦΙΑ", 4),
            _text("zh", "北京", 5),
        ],
    )
    found = {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle))}
    assert found == {found_in}


@pytest.mark.parametrize("at", [0, STRIDE - 5, STRIDE, 3 * STRIDE - MAX_NEEDLE + 1, 3 * STRIDE + 17])
def test_search_finds_a_needle_anywhere_in_a_long_text(store: Store, at: int) -> None:
    """A long trace's text is searched whole: a needle across a boundary of PostgreSQL's chunks is found too."""
    needle = "Needle-" + "x" * (MAX_NEEDLE - 14) + "-Ωmega"
    filler = "lorem ipsum " * (4 * STRIDE // 12)
    _import(store, [_text("long", filler[:at] + needle + filler[at:], 1), _text("other", filler, 2)])
    for query in (needle, needle.upper(), needle[5:40], needle[-12:]):
        found = {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=query))}
        assert found == {"long"}, query


def test_a_search_longer_than_the_limit_is_refused_on_both_backends(store: Store) -> None:
    with pytest.raises(InvalidQueryError, match=f"at most {MAX_NEEDLE}"):
        store.list_conversations(ConversationQuery(search="a" * (MAX_NEEDLE + 1)))
    assert store.list_conversations(ConversationQuery(search="a" * MAX_NEEDLE)).items == ()
