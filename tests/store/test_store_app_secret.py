"""The secrets processes share: made once by the first to ask, the same for every later asker."""

from __future__ import annotations

import threading

from core.store import Store


def test_a_shared_secret_is_made_once_and_read_back_by_every_store_on_the_database(db_url: str) -> None:
    with Store.open(db_url) as one, Store.open(db_url) as other:
        first = one.shared_secret("csrf")
        assert len(first) == 64 and int(first, 16) >= 0
        assert other.shared_secret("csrf") == first
        assert one.shared_secret("another") != first


def test_concurrent_first_askers_agree_on_one_secret(db_url: str) -> None:
    stores = [Store.open(db_url) for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    got: list[str] = []
    failures: list[BaseException] = []

    def ask(store: Store) -> None:
        barrier.wait()
        try:
            got.append(store.shared_secret("csrf"))
        except BaseException as exc:  # reported below: a thread's exception would be lost
            failures.append(exc)

    threads = [threading.Thread(target=ask, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for store in stores:
        store.close()
    assert failures == [] and len(got) == 4 and len(set(got)) == 1
