"""Dashboard benchmark: the first response of a conversation page, 100 vs 10,000 trace records, over the store.

    .venv/bin/python bench/bench_web.py [--records 10000] [--runs 5]

Figures, not assertions (``tests/web/test_web_timeline.py`` asserts the size bound). For each trace
size, in a fresh SQLite store: the bytes of ``GET /conversations/<id>``; the time of the first request
(cold: the conversation is read from the store and parsed, once per import); the best of ``--runs``
later requests (warm: the parsed conversation is cached until an import changes it); and the payload
page (the request body built by the adapters, pretty-printed and highlighted).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar.testing import TestClient  # noqa: E402

from bench.trace_fixture import build_trace_message  # noqa: E402
from tests.web.web_corpus import BASE_URL, temp_store  # noqa: E402
from web.app import create_app  # noqa: E402
from web.settings import Settings  # noqa: E402


def measure(records: int, runs: int) -> dict[str, float]:
    message = build_trace_message(records).model_copy(update={"conversation_id": f"bench-{records}"})
    store = temp_store([message])
    url = f"/conversations/bench-{records}"
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as client:
        client.get("/")  # templates compiled, app warm; the conversation not yet read
        del message
        gc.collect()
        start = time.perf_counter()
        first = client.get(url)
        cold = time.perf_counter() - start
        warm = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            client.get(url)
            warm = min(warm, time.perf_counter() - start)
        start = time.perf_counter()
        payload = client.get(f"{url}/payload/openai")
        payload_time = time.perf_counter() - start
    return {
        "bytes": len(first.content),
        "cold_ms": cold * 1000,
        "warm_ms": warm * 1000,
        "payload_bytes": len(payload.content),
        "payload_ms": payload_time * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    small, big = measure(100, ns.runs), measure(ns.records, ns.runs)
    print(f"{'records':>8} {'first response':>15} {'cold':>9} {'warm':>9} {'payload page':>13} {'payload':>9}")
    for n, fig in ((100, small), (ns.records, big)):
        print(
            f"{n:>8} {fig['bytes']:>13,} B {fig['cold_ms']:>6.1f} ms {fig['warm_ms']:>6.1f} ms "
            f"{fig['payload_bytes']:>11,} B {fig['payload_ms']:>6.0f} ms"
        )
    print(
        f"ratio {ns.records:,}/100: bytes {big['bytes'] / small['bytes']:.2f}x, "
        f"cold {big['cold_ms'] / small['cold_ms']:.1f}x, "
        f"warm {big['warm_ms'] / small['warm_ms']:.2f}x (the bound: bytes and warm time at most 2x; bytes under 1 MB)"
    )


if __name__ == "__main__":
    main()
