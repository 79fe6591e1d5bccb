"""Claiming a run by idempotency key: exactly one claimer wins, also under concurrency; the reply is kept."""

from __future__ import annotations

import threading

from core.reader import read_bytes
from core.store import NewRun, Store

MESSAGE = b'{"role":"user","msg_type":"text","content":"hi","create_ts":1000,"msg_id":"u","conversation_id":"c"}\n'


def test_one_claim_per_key_even_when_concurrent(store: Store, db_url: str) -> None:
    store.import_records(read_bytes(MESSAGE, source="r"), source="r")
    results: list[tuple[str, bool]] = []
    barrier = threading.Barrier(6)

    def claim() -> None:
        with Store.open(db_url) as own:  # one engine per thread, as separate processes would have
            barrier.wait()
            run, created = own.claim_run(
                NewRun("c", provider="openai", model="m", request_body={}, idempotency_key="k")
            )
            results.append((run.run_id, created))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({run_id for run_id, _ in results}) == 1
    assert sorted(created for _, created in results) == [False] * 5 + [True]
    assert store.counts()["runs"] == 1
    assert store.list_conversations().items[0].runs == 1


def test_the_parsed_reply_is_stored_with_the_run(store: Store) -> None:
    store.import_records(read_bytes(MESSAGE, source="r"), source="r")
    run = store.start_run(NewRun("c", provider="gemini", model="m", request_body={"contents": []}))
    call = {"id": "a", "name": "f", "arguments": "{}", "thought_signature": "c2ln"}
    reply = {"role": "assistant", "msg_type": "text", "content": "hi", "msg_id": "r", "conversation_id": "c",
             "create_ts": 1, "tool_calls": [call]}  # fmt: skip
    done = store.finish_run(run.run_id, status="ok", reply=reply)
    assert done.reply == reply
    assert store.get_run(run.run_id).reply == reply
    assert store.start_run(NewRun("c", provider="p", model="m", request_body={})).reply is None
