"""Dashboard benchmark: the first response of a conversation page, 100 vs 10,000 trace records, over the store.

    .venv/bin/python bench/bench_web.py [--records 10000] [--runs 5] [--pg]

Figures, not assertions (``tests/web/timeline/test_timeline.py`` asserts the size bound). One process and
one store (SQLite; ``--pg`` for PostgreSQL) hold both conversations, plus a warm-up conversation of
the small one's shape. The machine is shared, so every figure is the best of ``--runs`` rounds, and
each round times the small and the large conversation one after the other (``bench/timing.py``); one
discarded round first pays the process's one-off costs (imports, first validations), which neither
size should carry.

- bytes: of ``GET /conversations/<id>``.
- cold, new app: the first request of an app created for it, after ``GET /``: that request also
  compiles the conversation page's templates (a constant, the same for both sizes), as the first
  page opened after a restart does.
- cold: the first request for the conversation in an app that has already served a conversation
  page of the same shape (templates compiled, the cache emptied): what opening a conversation costs
  a running server. The stricter ratio: no constant pads both sides. On SQLite the timeline is
  ordered from the outlines the import stored and the page's records are read by byte span
  (``web.timeline.stored``); on PostgreSQL the stored JSON is read whole and scanned
  (``web.timeline.outline``).
- warm: later requests (the conversation is cached until an import changes it).
- payload: the payload page, requested right after the conversation page in an app created for the
  round (so its caches are cold), the collector run between the two as before every timed request.
- page + payload: the same two requests timed together, nothing run between them: what a reader who
  opens the payload from the conversation page waits in all. Typing the whole conversation (and
  the collector's passes over the objects it makes) falls in one of the two, whichever asks first.
- replays, compare: ``/conversations/<id>/replays`` and ``/runs/compare`` of two finished runs of the
  conversation (an OpenAI and a Gemini replay of its final reply, request bodies built by replay
  itself, so a 10,000-record trace's runs carry its whole history), in the app already warmed on the
  warm-up conversation's runs.

``--windows`` measures the payload and diff pages shown by windows instead (``measure_windows``):
- cold: the first response in an app created for it, the page's digest stored (``web.bodies.digest``):
  what a reader gets after an import and its background job (``fill_digests``). The acceptance's case.
- first-ever: the first response with no digest stored (the conversation typed, the requests built,
  the windows planned, the digest made and stored), in an app created for it: the honest cost of a
  page nobody and no job has made yet.
- warm: the same page again in the same app; a window: one from the middle of the body (warm).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar import Litestar  # noqa: E402
from litestar.testing import TestClient  # noqa: E402

from bench.timing import timed  # noqa: E402
from bench.trace_fixture import build_trace_message  # noqa: E402
from core import MESSAGE_ADAPTER, Message  # noqa: E402
from core.replay.run import prepare, start  # noqa: E402
from core.store import Store  # noqa: E402
from core.store import digests as stored_digests  # noqa: E402
from tests.store.store_pg import create_pg_database, drop_pg_database, pg_database_url  # noqa: E402
from tests.web.web_corpus import BASE_URL, import_messages, temp_store  # noqa: E402
from web.app import create_app  # noqa: E402
from web.bodies.digest_task import fill_digests  # noqa: E402
from web.settings import Settings  # noqa: E402
from web.source import ConversationCache, StoreSource  # noqa: E402

SMALL = 100
WARM_UP = "bench-warm-up"


def conversation(records: int, conversation_id: str, prefix: str = "") -> Message:
    """The benchmark trace under ``conversation_id``; ``prefix`` makes its msg_ids unique in the store."""
    data: dict[str, Any] = MESSAGE_ADAPTER.dump_python(build_trace_message(records), mode="json")
    data["conversation_id"] = conversation_id
    for item in (data, *data["intermediate_trace"]["records"]):
        item["msg_id"] = prefix + item["msg_id"]
    return MESSAGE_ADAPTER.validate_python(data)


def url_of(conversation_id: str) -> str:
    return f"/conversations/{conversation_id}"


@contextmanager
def client_for(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app, base_url=BASE_URL) as client:
        assert client.get("/").status_code == 200
        yield client


def cold_new_app(store: Store, conversation_id: str) -> float:
    with client_for(create_app(Settings(), StoreSource(store))) as client:
        return timed(lambda: client.get(url_of(conversation_id)))


def payload_after_page(store: Store, conversation_id: str) -> tuple[float, int]:
    with client_for(create_app(Settings(), StoreSource(store))) as client:
        client.get(url_of(conversation_id))
        response: list[Any] = []
        ms = timed(lambda: response.append(client.get(f"{url_of(conversation_id)}/payload/openai")))
        return ms, len(response[0].content)


def page_then_payload(store: Store, conversation_id: str) -> float:
    with client_for(create_app(Settings(), StoreSource(store))) as client:
        return timed(
            lambda: (client.get(url_of(conversation_id)), client.get(f"{url_of(conversation_id)}/payload/openai"))
        )


REPLAY_ENV = {"OPENAI_API_KEY": "bench-not-a-key", "GEMINI_API_KEY": "bench-not-a-key"}
"""Keys that make both dialects available to ``prepare``; nothing is ever sent."""


def record_runs(store: Store, conversation_id: str) -> tuple[str, str]:
    """Two finished replays of the conversation's final reply, as the dashboard records them; their run ids."""
    ids: list[str] = []
    for provider, model in (("openai", "gpt-4o"), ("gemini", "gemini-2.0-flash")):
        run, _ = start(store, prepare(store, conversation_id, provider, model, environ=REPLAY_ENV))
        reply = {"role": "assistant", "msg_type": "text", "content": f"replayed by {model}", "msg_id": run.run_id}
        store.finish_run(run.run_id, status="ok", reply=reply)
        ids.append(run.run_id)
    return ids[0], ids[1]


def runs_urls(conversation_id: str, runs: tuple[str, str]) -> dict[str, str]:
    return {
        "replays": f"{url_of(conversation_id)}/replays",
        "compare": f"/runs/compare?a={runs[0]}&b={runs[1]}",
    }


def best(figures: dict[str, dict[str, float]], size: str, name: str, value: float) -> None:
    figures[size][name] = min(figures[size].get(name, float("inf")), value)


def import_sizes(store: Store, records: int, prefix: str) -> dict[str, str]:
    """Import the warm-up conversation and one of each size; their ids by size (``small``, ``large``)."""
    ids = {"small": f"{prefix}{SMALL}", "large": f"{prefix}{records}"}
    import_messages(
        store,
        [
            conversation(SMALL, WARM_UP, "w-"),
            conversation(SMALL, ids["small"], "s-"),
            conversation(records, ids["large"], "l-"),
        ],
    )
    return ids


def measure(records: int, runs: int, store: Store) -> dict[str, dict[str, float]]:
    """Each figure of both sizes (keys ``small`` and ``large``), in milliseconds and bytes, over an empty ``store``."""
    ids = import_sizes(store, records, "bench-")
    pages = {size: runs_urls(cid, record_runs(store, cid)) for size, cid in ids.items()}
    warm_up_pages = runs_urls(WARM_UP, record_runs(store, WARM_UP))
    source = StoreSource(store)
    figures: dict[str, dict[str, float]] = {"small": {}, "large": {}}
    with client_for(create_app(Settings(), source)) as client:
        client.get(url_of(WARM_UP))  # the page's templates compiled; SQL statements cached
        for url in warm_up_pages.values():
            assert client.get(url).status_code == 200
        for round_ in range(runs + 1):  # round 0 pays the process's one-off costs and is dropped
            for size, conversation_id in ids.items():
                url = url_of(conversation_id)
                new_app = cold_new_app(store, conversation_id)
                source.cache = ConversationCache()
                response: list[Any] = []
                cold = timed(lambda: response.append(client.get(url)))  # noqa: B023 (called right here)
                warm = min(timed(lambda: client.get(url)) for _ in range(3))  # noqa: B023
                payload, payload_bytes = payload_after_page(store, conversation_id)
                both = page_then_payload(store, conversation_id)
                if round_ == 0:
                    continue
                figures[size]["bytes"] = len(response[0].content)
                figures[size]["payload_bytes"] = payload_bytes
                best(figures, size, "cold_new_app", new_app)
                best(figures, size, "cold", cold)
                best(figures, size, "warm", warm)
                best(figures, size, "payload", payload)
                best(figures, size, "page_and_payload", both)
        # Apart from the rounds above: a payload build's thread may still be freeing memory after its answer.
        for _ in range(runs):
            for size in ids:
                for name, page_url in pages[size].items():
                    answer: list[Any] = []
                    ms = timed(lambda: answer.append(client.get(page_url)))  # noqa: B023
                    assert answer[0].status_code == 200, answer[0].text[:300]
                    figures[size][f"{name}_bytes"] = len(answer[0].content)
                    best(figures, size, name, ms)
    return figures


WINDOW_PAGES = {
    "payload": "/payload/openai",
    "diff": "/diff?left=openai&right=anthropic",
}


def _first_window_url(html: str) -> str:
    """The URL of the middle window of the page's first body (its placeholders carry them)."""
    found = re.findall(r'hx-get="([^"]*/window\?[^"]*)"', html)
    return unescape(found[len(found) // 2]) if found else ""


def drop_digests(store: Store) -> None:
    """Every stored digest deleted: the next page of each conversation is its first-ever request."""
    with store.engine.begin() as conn:
        conn.execute(stored_digests.DIGEST_PARTS.delete())
        conn.execute(stored_digests.DIGESTS.delete())


def measure_windows(records: int, runs: int, store: Store) -> dict[str, dict[str, float]]:
    """The payload and diff pages' first responses (bytes, ms) with and without a stored digest, and a window."""
    ids = import_sizes(store, records, "bench-w-")
    figures: dict[str, dict[str, float]] = {"small": {}, "large": {}}
    for round_ in range(runs + 1):  # round 0 pays the process's one-off costs and is dropped
        for size, conversation_id in ids.items():
            drop_digests(store)
            # A budget no cold build reaches on a loaded machine: the figure is the build's, not a 503's.
            with client_for(create_app(Settings(heavy_budget_seconds=600), StoreSource(store))) as client:
                for path in WINDOW_PAGES.values():
                    client.get(url_of(WARM_UP) + path)  # templates compiled
                for name, path in WINDOW_PAGES.items():
                    url = url_of(conversation_id) + path
                    first: list[Any] = []
                    no_digest = timed(lambda: first.append(client.get(url)))  # noqa: B023 (called right here)
                    assert first[0].status_code == 200, (url, first[0].status_code)
                    if round_:
                        best(figures, size, f"{name}_first_ever", no_digest)
                    # The rest of the digest is made after the answer; not while the next figure is timed.
                    assert client.app.state.backlog.wait_idle(600)
            fill_digests(store, conversation_id)  # what the job an import queues does, in the background
            with client_for(create_app(Settings(heavy_budget_seconds=600), StoreSource(store))) as client:
                for path in WINDOW_PAGES.values():
                    client.get(url_of(WARM_UP) + path)
                for name, path in WINDOW_PAGES.items():
                    url = url_of(conversation_id) + path
                    response: list[Any] = []
                    cold = timed(lambda: response.append(client.get(url)))  # noqa: B023
                    warm = min(timed(lambda: client.get(url)) for _ in range(3))  # noqa: B023
                    assert response[0].status_code == 200, (url, response[0].status_code)
                    window_url = _first_window_url(response[0].text)
                    window = min(timed(lambda: client.get(window_url)) for _ in range(3)) if window_url else 0.0  # noqa: B023
                    if round_ == 0:
                        continue
                    figures[size][f"{name}_bytes"] = len(response[0].content)
                    best(figures, size, f"{name}_cold", cold)
                    best(figures, size, f"{name}_warm", warm)
                    best(figures, size, f"{name}_window", window)
    return figures


def report_windows(records: int, figures: dict[str, dict[str, float]]) -> None:
    small, large = figures["small"], figures["large"]
    print(
        f"{'page':>8} {'records':>8} {'first response':>15} {'cold':>9} {'warm':>9} {'a window':>9} {'first-ever':>11}"
    )
    for name in WINDOW_PAGES:
        for n, fig in ((SMALL, small), (records, large)):
            print(
                f"{name:>8} {n:>8} {fig[f'{name}_bytes']:>13,.0f} B {fig[f'{name}_cold']:>6.0f} ms "
                f"{fig[f'{name}_warm']:>6.0f} ms {fig[f'{name}_window']:>6.0f} ms {fig[f'{name}_first_ever']:>8.0f} ms"
            )
        print(
            f"{name:>8} ratio {records:,}/{SMALL}: bytes {large[f'{name}_bytes'] / small[f'{name}_bytes']:.2f}x, "
            f"cold (digest stored) {large[f'{name}_cold'] / small[f'{name}_cold']:.2f}x, "
            f"warm {large[f'{name}_warm'] / small[f'{name}_warm']:.2f}x, "
            f"first-ever (no digest) {large[f'{name}_first_ever'] / small[f'{name}_first_ever']:.2f}x "
            f"(the bound: first response at most 2x; bytes under 1 MB)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--windows", action="store_true", help="the payload and diff pages by windows")
    parser.add_argument(
        "--pg",
        action="store_true",
        help="over PostgreSQL (a fresh database on the test server, dropped after) instead of SQLite",
    )
    ns = parser.parse_args()
    how = measure_windows if ns.windows else measure
    if ns.pg:
        name = create_pg_database()
        try:
            with Store.open(pg_database_url(name)) as store:
                figures = how(ns.records, ns.runs, store)
        finally:
            drop_pg_database(name)
    else:
        figures = how(ns.records, ns.runs, temp_store())
    print(f"backend: {'PostgreSQL' if ns.pg else 'SQLite'}")
    if ns.windows:
        report_windows(ns.records, figures)
        return
    small, large = figures["small"], figures["large"]
    print(
        f"{'records':>8} {'first response':>15} {'cold, new app':>14} {'cold':>9} {'warm':>9} "
        f"{'payload page':>13} {'payload':>9} {'page + payload':>15}"
    )
    for n, fig in ((SMALL, small), (ns.records, large)):
        print(
            f"{n:>8} {fig['bytes']:>13,.0f} B {fig['cold_new_app']:>11.1f} ms {fig['cold']:>6.1f} ms "
            f"{fig['warm']:>6.1f} ms {fig['payload_bytes']:>11,.0f} B {fig['payload']:>6.0f} ms "
            f"{fig['page_and_payload']:>12.0f} ms"
        )
    print(
        f"ratio {ns.records:,}/{SMALL}: bytes {large['bytes'] / small['bytes']:.2f}x, "
        f"cold new app {large['cold_new_app'] / small['cold_new_app']:.2f}x, "
        f"cold {large['cold'] / small['cold']:.2f}x, warm {large['warm'] / small['warm']:.2f}x "
        f"(the bound: first response at most 2x; bytes under 1 MB)"
    )
    for name in ("replays", "compare"):
        print(
            f"{name}: {SMALL} records {small[name]:.1f} ms {small[name + '_bytes']:,.0f} B; "
            f"{ns.records:,} records {large[name]:.1f} ms {large[name + '_bytes']:,.0f} B; "
            f"ratio {large[name] / small[name]:.2f}x time, {large[name + '_bytes'] / small[name + '_bytes']:.2f}x bytes"
        )


if __name__ == "__main__":
    main()
