"""A worker process of the store torture and kill -9 tests (run as a script, never collected by pytest).

    importer URL SEED SECONDS FILE...   import the files (first pass in full, then re-imports), record runs
    reader   URL SEED SECONDS            list, search, filter, page and open conversations; check invariants
    slow     URL FILE                    import FILE, pausing after each written batch (the kill -9 target)

Each prints one JSON line of results on stdout. Every unexpected exception is an
error in that line (a lock error included), so the test sees them all.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any

from core.errors import InputError
from core.reader import Record, read_path
from core.store import ConversationQuery, NewRun, Store, TokenUsage
from core.store.importer import CHUNK


def importer(url: str, seed: int, seconds: float, files: list[str]) -> dict[str, Any]:
    rng = random.Random(seed)
    result: dict[str, Any] = {"imported": 0, "refused": [], "runs": 0, "errors": []}
    with Store.open(url) as store:
        deadline = time.monotonic() + seconds  # counted from start-up, however long the start took
        conversations: list[str] = []
        order = files[:]
        rng.shuffle(order)
        first_pass = len(order)
        done = 0
        while done < first_pass or time.monotonic() < deadline:
            path = order[done % len(order)]
            done += 1
            try:
                summary = store.import_path(path)
                result["imported"] += summary.imported
                conversations.extend(
                    c.conversation_id for c in store.list_conversations(ConversationQuery(limit=5)).items
                )
            except InputError as exc:
                result["refused"].append(exc.source)
            except Exception:
                result["errors"].append(traceback.format_exc(limit=3))
            if conversations and rng.random() < 0.5:
                try:  # the "re-run saves its result while an import runs" case
                    run = store.start_run(
                        NewRun(rng.choice(conversations), provider="fake", model="m", request_body={"s": seed})
                    )
                    store.finish_run(run.run_id, status="ok", response_body={}, usage=TokenUsage(total_tokens=1))
                    result["runs"] += 1
                except Exception:
                    result["errors"].append(traceback.format_exc(limit=3))
    return result


def reader(url: str, seed: int, seconds: float) -> dict[str, Any]:
    rng = random.Random(seed)
    result: dict[str, Any] = {"reads": 0, "errors": []}
    words = ["question", "answer", "tool output", "lost type", "北京", "x", "cats"]
    kinds = ["user:text", "user:image", "tool", "console", "assistant", None]
    with Store.open(url) as store:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                q = ConversationQuery(
                    search=rng.choice([None, *words]),
                    kind=rng.choice(kinds),
                    has_damaged=rng.choice([None, True, False]),
                    has_runs=rng.choice([None, True, False]),
                    sort=rng.choice(["recent", "oldest", "newest", "damaged"]),
                    limit=rng.choice([1, 10, 50]),
                )
                page = store.list_conversations(q)
                if page.next_cursor is not None:
                    page = store.list_conversations(
                        ConversationQuery(
                            sort=q.sort, limit=q.limit, kind=q.kind, search=q.search, cursor=page.next_cursor
                        )
                    )
                if page.items:
                    detail = store.get_conversation(rng.choice(page.items).conversation_id)
                    # One snapshot: the figures and the messages must agree exactly.
                    s = detail.summary
                    assert s.messages == len(detail.messages), (s, len(detail.messages))
                    assert s.records == sum(m.records for m in detail.messages)
                    assert s.damaged == sum(m.damaged for m in detail.messages)
                    assert [m.create_ts for m in detail.messages] == sorted(m.create_ts for m in detail.messages)
                store.list_runs(limit=10)
                result["reads"] += 1
            except Exception:
                result["errors"].append(traceback.format_exc(limit=3))
    return result


def slow(url: str, path: str) -> dict[str, Any]:
    def paused() -> Iterator[Record]:
        for n, record in enumerate(read_path(path)):
            if n and n % CHUNK == 0:  # asked for the next one: the batch before it is written
                print(f"written {n}", flush=True)
                time.sleep(0.3)
            yield record

    with Store.open(url) as store:
        summary = store.import_records(paused(), source=path)
    return {"imported": summary.imported}


def main(argv: list[str]) -> int:
    role, url = argv[0], argv[1]
    if role == "importer":
        out = importer(url, int(argv[2]), float(argv[3]), argv[4:])
    elif role == "reader":
        out = reader(url, int(argv[2]), float(argv[3]))
    elif role == "slow":
        out = slow(url, argv[2])
    else:
        raise SystemExit(f"unknown role {role}")
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
