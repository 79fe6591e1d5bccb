"""Pages of a 100,000-record trace: the payload and diff pages before and after their digest, and the timeline.

    .venv/bin/python bench/bench_large_pages.py --store /tmp/pages.db [--records 100000] [--runs 3]
    .venv/bin/python bench/bench_large_pages.py --store postgresql+psycopg://postgres@127.0.0.1:5432/pages

Figures, not assertions. One store holds a warm-up conversation, one of 100 records, one of 10,000 and one of
``--records``; ``--store`` names a SQLite file, or a PostgreSQL database by its URL, to keep it in, filled when
empty and reused after (a 100,000-record import and its digests take minutes on a loaded machine). Every
figure is the best of ``--runs`` rounds, each in an app created for it (cold caches), after ``GET /`` and the warm-up
conversation's page (templates compiled):

- after the digest: the payload (openai) and diff (openai / anthropic) pages' first response, their digest
  stored (made once, as the job an import queues makes it); the bound: at most 2x the 100-record
  conversation's, and under 1 MB.
- before the digest: the same pages of another pair (gemini; gemini / openai), no digest stored: the
  large one answers with the "being prepared" panel (``web.bodies.preparing``); the bound: under 1 s.
  Each measured in a process of its own, since each starts the digest's preparation in the background.
- timeline: ``GET /conversations/<id>``, ``--records`` against 10,000, both orders stored as the digest job
  stores them (``web.timeline.paged``); the bound: at most 2x.

The last line prints the three ratios the acceptance asks and the large conversation's first response sizes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar.testing import TestClient  # noqa: E402

from bench.bench_web import WARM_UP, client_for, conversation, url_of  # noqa: E402
from bench.timing import timed  # noqa: E402
from core.store import Store  # noqa: E402
from core.store import digests as stored_digests  # noqa: E402
from tests.web.web_corpus import import_messages  # noqa: E402
from web.app import create_app  # noqa: E402
from web.bodies.asked import DiffLinks  # noqa: E402
from web.bodies.builder import PayloadBuilder  # noqa: E402
from web.bodies.diffs import diff_digest  # noqa: E402
from web.bodies.requests import AskedRequest, payload_digest  # noqa: E402
from web.settings import Settings  # noqa: E402
from web.source import StoreSource  # noqa: E402

AFTER = {"payload": "/payload/openai", "diff": "/diff?left=openai&right=anthropic"}
BEFORE = {"payload": "/payload/gemini", "diff": "/diff?left=gemini&right=openai"}
SIZES = {"small": 100, "mid": 10_000}


def open_store(path: Path | str, records: int) -> tuple[Store, dict[str, str]]:
    """The store at ``path`` (a file or a database URL) holding the benchmark's conversations (imported when
    missing); their ids by size."""
    ids = {"small": "bench-100", "mid": "bench-10000", "large": f"bench-{records}"}
    store = Store.open(str(path))
    wanted = [(100, WARM_UP, "w-"), (100, ids["small"], "s-"), (10_000, ids["mid"], "m-")]
    for n, cid, prefix in [*wanted, (records, ids["large"], "l-")]:
        if _exists(store, cid):
            continue
        print(f"importing {cid} ({n:,} records)", flush=True)
        import_messages(store, [conversation(n, cid, prefix)], source=f"{cid}.jsonl")
    return store, ids


def _exists(store: Store, conversation_id: str) -> bool:
    return stored_digests.content_fingerprint(store.engine, conversation_id) is not None


def make_digests(store: Store, conversation_id: str) -> None:
    """The digests the ``AFTER`` pages read, as far as their first response reads them: head, first windows and
    listings (kept in the store for the next run; the later windows do not change a first response)."""
    source, payloads = StoreSource(store), PayloadBuilder(None)
    payload_digest(source, payloads, AskedRequest(conversation_id, "openai", None, False, None))
    diff_digest(source, payloads, DiffLinks(conversation_id, "openai", "anthropic", None, False))


def first_response(store: Store, url: str, settings: Settings) -> tuple[float, int, str]:
    """ms, bytes and text of ``url``'s first response in an app created for it (the warm-up's page opened first)."""
    with client_for(create_app(settings, StoreSource(store))) as client:
        client.get(url_of(WARM_UP))
        answer: list[Any] = []
        ms = timed(lambda: answer.append(client.get(url)))
        assert answer[0].status_code == 200, (url, answer[0].status_code)
        _settle(client)
        return ms, len(answer[0].content), answer[0].text


def _settle(client: TestClient[Any]) -> None:
    """Let the work a page left for after its answer end before the next figure (not for a preparation)."""
    client.app.state.backlog.wait_idle(600)


def best(figures: dict[str, float], name: str, value: float) -> None:
    figures[name] = min(figures.get(name, float("inf")), value)


def measure_before(store: Store, url: str, settings: Settings) -> tuple[float, int, bool]:
    """ms, bytes of ``url``'s first response with no digest stored, and whether it is the preparing panel."""
    with client_for(create_app(settings, StoreSource(store))) as client:
        client.get(url_of(WARM_UP))
        answer: list[Any] = []
        ms = timed(lambda: answer.append(client.get(url)))
        client.app.state.backlog.close()
        return ms, len(answer[0].content), "digest-preparing" in answer[0].text


def _before_in_a_child(ns: argparse.Namespace, name: str) -> tuple[float, int, bool]:
    """``measure_before`` in a process of its own: the preparation it starts types the trace on a thread, which
    holds the interpreter while it types, and must not weigh on the next figure."""
    argv = [sys.executable, __file__, "--store", str(ns.store), "--records", str(ns.records), "--before", name]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()
    return float(out[-3]), int(out[-2]), out[-1] == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--store", required=True, help="a store file or PostgreSQL URL (filled when empty, then reused)"
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", choices=sorted(BEFORE), help=argparse.SUPPRESS)  # one child's figure
    ns = parser.parse_args()
    store, ids = open_store(ns.store, ns.records)
    settings = Settings(heavy_budget_seconds=600)
    if ns.before:
        ms, size_bytes, panel = measure_before(store, url_of(ids["large"]) + BEFORE[ns.before], settings)
        print(ms, size_bytes, panel)
        os._exit(0)  # the preparation's thread is not waited for
    for size in ("small", "large"):
        print(f"making the digests of {ids[size]}", flush=True)
        make_digests(store, ids[size])
    for size in ("mid", "large"):  # the timeline's order, stored by the digest job an import queues
        StoreSource(store).store_order(ids[size])
    figures: dict[str, dict[str, float]] = {size: {} for size in ids}
    for round_ in range(ns.runs + 1):  # round 0 pays the process's one-off costs and is dropped
        for size in ("small", "large"):
            for name, path in AFTER.items():
                ms, size_bytes, _ = first_response(store, url_of(ids[size]) + path, settings)
                if round_:
                    best(figures[size], f"{name}_after", ms)
                    figures[size][f"{name}_bytes"] = size_bytes
        for size in ("mid", "large"):
            ms, size_bytes, _ = first_response(store, url_of(ids[size]), settings)
            if round_:
                best(figures[size], "timeline", ms)
                figures[size]["timeline_bytes"] = size_bytes
    before = {name: _before_in_a_child(ns, name) for name in BEFORE}
    small, large, mid = figures["small"], figures["large"], figures["mid"]
    print(f"records: small {SIZES['small']:,}, mid {SIZES['mid']:,}, large {ns.records:,}")
    for name in AFTER:
        print(
            f"{name:>8} after the digest: {SIZES['small']} records {small[f'{name}_after']:.0f} ms "
            f"{small[f'{name}_bytes']:,.0f} B; {ns.records:,} records {large[f'{name}_after']:.0f} ms "
            f"{large[f'{name}_bytes']:,.0f} B; ratio {large[f'{name}_after'] / small[f'{name}_after']:.2f}x "
            "(the bound: at most 2x, under 1 MB)"
        )
    for name, (ms, size_bytes, panel) in before.items():
        shown = "the preparing panel" if panel else "the page"
        print(f"{name:>8} before the digest: {ns.records:,} records {ms:.0f} ms {size_bytes:,} B, {shown} (bound: 1 s)")
    print(
        f"timeline first response: {SIZES['mid']:,} records {mid['timeline']:.0f} ms "
        f"{mid['timeline_bytes']:,.0f} B; {ns.records:,} records {large['timeline']:.0f} ms "
        f"{large['timeline_bytes']:,.0f} B; ratio {large['timeline'] / mid['timeline']:.2f}x (the bound: at most 2x)"
    )
    print(
        "ratios: timeline {:.2f}x, payload {:.2f}x, diff {:.2f}x; first responses {:,.0f} B (payload), "
        "{:,.0f} B (diff), {:,.0f} B (timeline); bounds 2x and 1,048,576 B".format(
            large["timeline"] / mid["timeline"],
            large["payload_after"] / small["payload_after"],
            large["diff_after"] / small["diff_after"],
            large["payload_bytes"],
            large["diff_bytes"],
            large["timeline_bytes"],
        )
    )


if __name__ == "__main__":
    main()
