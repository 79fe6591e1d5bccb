"""``traceloupe import``: a message is (conversation_id, msg_id), and nothing is lost to a repeated msg_id; any file
is stored whole or refused on one line. Both on SQLite and PostgreSQL.

The classes of attack: silent data loss by id squatting (a hostile or merely careless file claims msg_ids first;
before, later imports skipped their messages with the same ids as "already stored", exit 0), and a hostile trace
file that crashes the importer (denial of service, later files skipped) or leaves half of itself behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given

from core.accounts import Accounts
from core.jsonio import dumps
from core.reader import read_bytes
from core.store import ConversationQuery, NewRun, Store
from core.store.derive import derived_msg_id
from core.store.versions import same_message
from tests.store.fuzz_files import DEEP, FILES, fuzz
from web.cli import main


def _msg(cid: str, msg_id: str, content: str, ts: int = 1, role: str = "user") -> dict[str, Any]:
    kind = {"msg_type": "text"} if role in ("user", "assistant") else {}
    return {"role": role, **kind, "content": content, "create_ts": ts, "msg_id": msg_id, "conversation_id": cid}


def _write(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def _import(db: str, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["import", *args, "--db", db])
    out = capsys.readouterr()
    return code, out.out, out.err


def _contents(db: str, cid: str) -> list[str]:
    with Store.open(db) as store:
        return [m.body["content"] for m in store.get_conversation(cid).messages]


def test_an_id_claimed_by_another_conversation_does_not_drop_a_message(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    squatter = _write(tmp_path / "squat.jsonl", [_msg("hostile", "m1", "claimed first")])
    legit = _write(tmp_path / "legit.jsonl", [_msg("real", "m1", "the question"), _msg("real", "m2", "the answer", 2)])
    assert _import(db_url, capsys, str(squatter))[0] == 0
    code, out, err = _import(db_url, capsys, str(legit))
    assert code == 0, err
    assert "imported 2 messages" in out and "0 already stored" in out
    assert _contents(db_url, "real") == ["the question", "the answer"]
    assert _contents(db_url, "hostile") == ["claimed first"]


def test_a_different_message_under_a_stored_identity_refuses_the_file(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path / "first.jsonl", [_msg("other", "x", "unrelated"), _msg("c", "m1", "original")])
    assert _import(db_url, capsys, str(first))[0] == 0
    second = _write(
        tmp_path / "second.jsonl",
        [_msg("new", "n1", "would be new"), _msg("c", "m2", "also new", 2), _msg("c", "m1", "a rewrite", 3)],
    )
    code, out, err = _import(db_url, capsys, str(second))
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"traceloupe: {second}:3 at $.msg_id: message 'm1' of conversation 'c' differs")
    assert f"imported from {first}:2" in line and "--replace" in line and "nothing from this file was stored" in line
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 2
        assert {c.conversation_id for c in store.iter_conversations()} == {"other", "c"}
    assert _contents(db_url, "c") == ["original"]


@pytest.mark.parametrize("suffix", ["jsonl", "json"])
def test_two_versions_in_one_file_refuse_it(
    suffix: str, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [_msg("c", "m1", "one"), _msg("c", "m2", "two", 2), _msg("c", "m1", "three", 3)]
    path = tmp_path / f"twice.{suffix}"
    if suffix == "json":
        path.write_bytes(orjson.dumps(messages))
    else:
        _write(path, messages)
    code, _, err = _import(db_url, capsys, str(path), "--replace")
    assert code == 1
    (line,) = err.strip().splitlines()
    where = f"{path}:3 at $.msg_id" if suffix == "jsonl" else f"{path} at $[2].msg_id"
    assert line.startswith(f"traceloupe: {where}: message 'm1' of conversation 'c' appears twice")
    assert ("first at line 1" if suffix == "jsonl" else "first at $[0]") in line
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def test_the_same_message_twice_is_stored_once(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    same = _msg("c", "m1", "hello")
    reordered = dict(reversed(list(same.items())))  # the same value: an export from PostgreSQL's JSONB reads so
    path = _write(tmp_path / "dup.jsonl", [same, reordered, _msg("c", "m2", "bye", 2)])
    code, out, err = _import(db_url, capsys, str(path))
    assert code == 0, err
    assert "imported 2 messages" in out and "1 already stored" in out
    code, out, _ = _import(db_url, capsys, str(_write(tmp_path / "again.jsonl", [reordered])))
    assert code == 0 and "imported 0 messages" in out and "1 already stored" in out


def test_replace_takes_the_new_version_and_says_how_many(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = {"records": [_msg("", "r1", "old step", 5, role="system")]}
    old = [
        {**_msg("c", "m1", "old title", 10), "intermediate_trace": trace},
        _msg("c", "m2", "reply", 20, role="assistant"),
        {**_msg("c", "m3", "https://e.com/x.png", 30), "msg_type": "image"},
    ]
    assert _import(db_url, capsys, str(_write(tmp_path / "old.jsonl", old)))[0] == 0
    with Store.open(db_url) as store:
        store.start_run(NewRun("c", provider="openai", model="m", request_body={}, up_to_msg_id="m1", started_at=25))
    new = [_msg("c", "m1", "new title", 15), _msg("c", "m3", "plain now", 30), _msg("c", "m4", "added", 40)]
    path = _write(tmp_path / "new.jsonl", new)
    code, _, err = _import(db_url, capsys, str(path))
    assert code == 1 and "differs" in err
    code, out, err = _import(db_url, capsys, str(path), "--replace")
    assert code == 0, err
    assert f"{path}: imported 3 messages" in out and "2 replaced" in out
    assert _contents(db_url, "c") == ["new title", "reply", "plain now", "added"]
    with Store.open(db_url) as store:
        (c,) = store.iter_conversations()
        # Every figure is the stored messages' own: the trace record and the image went with the old versions.
        assert (c.title, c.messages, c.turns, c.records, c.first_ts, c.last_activity, c.runs) == (
            "new title",
            4,
            3,
            0,
            15,
            40,
            1,
        )
        assert store.list_conversations(ConversationQuery(kind="user:image")).items == ()
        assert store.list_conversations(ConversationQuery(kind="system")).items == ()
        assert [x.conversation_id for x in store.list_conversations(ConversationQuery(search="plain now")).items] == [
            "c"
        ]
        assert store.list_conversations(ConversationQuery(search="old step")).items == ()
        assert store.get_conversation_outline("c") is not None  # the new rows have their outlines
        assert [r.up_to_msg_id for r in store.list_runs("c")[0]] == ["m1"]
        assert store.counts()["messages"] == 4


def test_an_import_that_replaces_messages_is_in_the_audit_log(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path / "old.jsonl", [_msg("c", "m1", "old", 10)])
    new = _write(tmp_path / "new.jsonl", [_msg("c", "m1", "new", 10), _msg("c", "m2", "added", 20)])
    assert _import(db_url, capsys, str(old))[0] == 0
    assert _import(db_url, capsys, str(new), "--replace")[0] == 0
    with Store.open(db_url) as store:
        events = Accounts(store).events()
    assert [(e.action, e.target, e.client) for e in events] == [
        ("import.replace", str(new), "command line"),  # the stored version of m1 was deleted for this one
        ("import", str(old), "command line"),
    ]
    assert events[0].detail == {"imported": 2, "conversations": 1, "replaced": 1}


def _stored(db: str) -> dict[tuple[str, str], str]:
    with Store.open(db) as store:
        return {
            (c.conversation_id, m.msg_id): dumps(m.body).decode()
            for c in store.iter_conversations()
            for m in store.get_conversation(c.conversation_id).messages
        }


@fuzz(40)  # per backend; each example is a whole `traceloupe import`
@given(data=FILES)
@example(data=DEEP)  # a RecursionError traceback; the files after it were skipped
@example(data=b'{"role":"system","msg_id":"m1","conversation_id":"c1","content":"a"}\n' * 2)
@example(data=b'{"role":"system","msg_id":"m1","conversation_id":"c1","content":"a\\u0000"}\n')
def test_import_stores_a_file_whole_or_refuses_it_naming_its_bad_lines(
    data: bytes, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    before = _stored(db_url)
    capsys.readouterr()
    code = main(["import", str(path), "--db", db_url])  # an exception escaping here is the traceback
    out, err = capsys.readouterr()
    after = _stored(db_url)
    if code != 0:
        assert code == 1, err
        lines = err.strip().splitlines()
        assert all(line.startswith(f"traceloupe: {path}") for line in lines), err
        assert lines[-1].endswith("(nothing from this file was stored)")
        assert after == before  # nothing partial
        return
    assert err == "" and out.startswith(f"{path}: imported ")
    file_messages = {
        _identity(r.raw, r.message.conversation_id): r.raw for r in read_bytes(data, source="f", store_lines=[])
    }
    assert set(after) >= set(before)
    assert set(after) - set(before) <= set(file_messages)  # nothing stored that the file does not hold
    for identity, raw in file_messages.items():  # and all of it is stored, as it is in the file
        assert same_message(after[identity], dumps(raw).decode())


def _identity(raw: dict[str, Any], conversation_id: str) -> tuple[str, str]:
    msg_id = raw.get("msg_id")
    return conversation_id, msg_id if isinstance(msg_id, str) else derived_msg_id(raw)


def test_an_import_queues_the_digest_job_of_each_large_conversation(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """So that the first opening of a large conversation's payload and diff pages finds them made (by ``serve`` or
    ``traceloupe worker``) instead of building them in the request."""
    from core.jobs import queue_for
    from web.bodies import digest_task

    monkeypatch.setattr(digest_task, "DIGEST_MIN_RECORDS", 3)
    trace = {"records": [_msg("big", f"r{i}", f"step {i}", role="assistant") for i in range(3)]}
    path = _write(
        tmp_path / "two.jsonl", [{**_msg("big", "m1", "go"), "intermediate_trace": trace}, _msg("small", "m1", "hi")]
    )
    code, out, err = _import(db_url, capsys, str(path))
    assert code == 0, err
    assert "queued the payload and diff pages of 1 large conversation" in out
    with Store.open(db_url) as store:
        queue = queue_for(store)
        try:
            jobs = queue.jobs(lock_prefix="digest:")
        finally:
            queue.stop()
    assert [(job.task, job.args["conversation_id"], job.status) for job in jobs] == [("digest", "big", "pending")]
    assert _import(db_url, capsys, str(path))[1].count("queued") == 0  # nothing changed: nothing to make again
