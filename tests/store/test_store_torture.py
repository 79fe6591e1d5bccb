"""Concurrency torture and kill -9, in subprocesses with fixed seeds, on SQLite and on PostgreSQL.

Modelled on Datasette's tests/test_connection_torture.py: 4 importer processes
(which also record runs, the "re-run saves while an import runs" case) and 4
reader processes (8 with ``TRACELOUPE_LONG_TESTS``) share one database for about
``TRACELOUPE_TORTURE_SECONDS`` (2.5 by default, 5 with ``TRACELOUPE_LONG_TESTS``);
each importer makes its whole first pass over its files however short that is.
Then: no worker saw any error (a lock error included), the row counts are exactly
what the files and the runs imply, every conversation's stored figures equal what
its messages say, and the database checks clean.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import func, select, text

from core.store import Store
from core.store.engine import read_transaction
from core.store.tables import CONVERSATIONS, MESSAGES, RUNS
from tests.long_runs import LONG_TESTS
from tests.store.store_factory import dataset
from tests.store.store_pg import BACKENDS
from tests.store.test_store_cascade import BY_CONVERSATION, BY_MESSAGE

WORKER = str(Path(__file__).with_name("torture_worker.py"))
SECONDS = float(os.environ.get("TRACELOUPE_TORTURE_SECONDS", "5" if LONG_TESTS else "2.5"))
IMPORTERS = 4
READERS = 8 if LONG_TESTS else 4


def _write(path: Path, messages: list[dict[str, Any]], bad_last_line: bool = False) -> Path:
    lines = [orjson.dumps(m) for m in messages]
    if bad_last_line:
        lines[-1] = lines[-1].replace(b'"create_ts":', b'"create_ts":"late",  "x":', 1)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _files(tmp_path: Path) -> tuple[list[list[str]], set[str], set[str]]:
    """Per importer: its own files, a neighbour's files (overlap) and one bad file; plus the msg_ids expected."""
    own: list[list[Path]] = []
    expected: set[str] = set()
    conversations: set[str] = set()
    for i in range(IMPORTERS):
        files = []
        for k in range(5):
            messages = dataset(seed=1000 + i * 10 + k, conversations=8, turns=2, records=4)
            expected.update(m["msg_id"] for m in messages)
            conversations.update(m["conversation_id"] for m in messages)
            files.append(_write(tmp_path / f"imp{i}-{k}.jsonl", messages))
        own.append(files)
    assigned = []
    for i in range(IMPORTERS):
        bad = _write(tmp_path / f"bad{i}.jsonl", dataset(seed=9000 + i, conversations=4), bad_last_line=True)
        assigned.append([str(p) for p in [*own[i], *own[(i + 1) % IMPORTERS][:2], bad]])
    return assigned, expected, conversations


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _result(proc: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode()[-2000:]
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


def _check_consistent(store: Store) -> None:
    """Stored figures equal what the rows say, and the database's own checks pass."""
    m, c, r = MESSAGES.c, CONVERSATIONS.c, RUNS.c
    with read_transaction(store.engine) as conn:
        per_conv = select(
            m.conversation_pk,
            func.count().label("n"),
            func.sum(m.records).label("records"),
            func.sum(m.damaged).label("damaged"),
            func.min(m.create_ts).label("first_ts"),
        ).group_by(m.conversation_pk)
        actual = {
            row.conversation_pk: (row.n, row.records, row.damaged, row.first_ts) for row in conn.execute(per_conv)
        }
        runs = {pk: n for pk, n in conn.execute(select(r.conversation_pk, func.count()).group_by(r.conversation_pk))}
        for row in conn.execute(select(c.id, c.messages, c.records, c.damaged, c.first_ts, c.runs)):
            assert actual[row.id] == (row.messages, row.records, row.damaged, row.first_ts), row
            assert runs.get(row.id, 0) == row.runs, row
        if store.backend == "sqlite":
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
            conn.exec_driver_sql("INSERT INTO message_fts(message_fts) VALUES ('integrity-check')")
        else:  # the keys the server no longer checks (revision 0034): every derived row names a stored parent
            for tables, key, parent in (
                (BY_MESSAGE, "message_pk", "messages"),
                (BY_CONVERSATION, "conversation_pk", "conversations"),
            ):
                for name in tables:
                    orphans = (
                        f"SELECT count(*) FROM {name} d WHERE NOT EXISTS (SELECT FROM {parent} p WHERE p.id = d.{key})"
                    )
                    assert conn.execute(text(orphans)).scalar_one() == 0, name


@pytest.mark.slow
@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_torture_fixed_seeds(fresh_url: str, tmp_path: Path) -> None:
    assigned, expected, conversations = _files(tmp_path)
    # The workers open a database nobody migrated yet: the first-use upgrade must happen exactly once.
    procs = [_spawn("importer", fresh_url, str(i), str(SECONDS), *assigned[i]) for i in range(IMPORTERS)]
    procs += [_spawn("reader", fresh_url, str(100 + i), str(SECONDS)) for i in range(READERS)]
    results = [_result(p, timeout=SECONDS + 120) for p in procs]
    importers, readers = results[:IMPORTERS], results[IMPORTERS:]

    errors = [e for res in results for e in res["errors"]]
    assert errors == [], errors[0]
    assert all(sorted(res["refused"]) and all("bad" in s for s in res["refused"]) for res in importers)
    assert sum(res["imported"] for res in importers) == len(expected)  # each message stored exactly once
    assert all(res["reads"] > 0 for res in readers)

    print(  # the figures, for `pytest -s`
        f"torture: {len(expected)} messages stored once by {IMPORTERS} importers, "
        f"{sum(res['runs'] for res in importers)} runs recorded, {sum(res['reads'] for res in readers)} reader rounds"
    )
    with Store.open(fresh_url) as store:
        counts = store.counts()
        assert counts["messages"] == len(expected)
        assert counts["conversations"] == len(conversations)
        assert counts["runs"] == sum(res["runs"] for res in importers)
        with read_transaction(store.engine) as conn:
            assert set(conn.execute(select(MESSAGES.c.msg_id)).scalars()) == expected
        _check_consistent(store)


@pytest.mark.slow
@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_kill_9_mid_import_leaves_the_file_absent(fresh_url: str, tmp_path: Path) -> None:
    earlier = _write(tmp_path / "earlier.jsonl", dataset(seed=1, conversations=3))
    big_messages = dataset(seed=2, conversations=300, turns=3, records=2)
    big = _write(tmp_path / "big.jsonl", big_messages)
    with Store.open(fresh_url) as store:
        store.import_path(earlier)
        before = store.counts()

    proc = _spawn("slow", fresh_url, str(big))
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()  # the first batch is written, inside the open transaction
    assert line == "written 1000\n", line
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)  # reaps it and closes the pipes
    assert proc.returncode == -signal.SIGKILL

    with Store.open(fresh_url) as store:
        assert store.counts() == before
        _check_consistent(store)
        if store.backend == "postgresql":
            # The server notices the dead client and rolls back; nothing is left holding locks.
            with read_transaction(store.engine) as conn:
                assert conn.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar() == 0
        # The same file imports completely afterwards: no stale lock, no half state in the way.
        summary = store.import_path(big)
        assert summary.imported == len(big_messages)
        _check_consistent(store)
