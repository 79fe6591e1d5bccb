"""OTLP import benchmark: an OTLP/JSON file of agent conversations against our own JSONL of the same messages.

    .venv/bin/python bench/bench_otlp_import.py [--mb 100] [--turns 5] [--document] [--keep DIR]

Figures, not assertions. Writes an OTLP/JSON file (JSON lines of requests as the collector's file exporter
writes, or with ``--document`` one ``{"resourceSpans": [...]}``; batches of 100 spans) of conversations
whose chat spans resend the whole history (as agents do: the file grows with the square of a conversation's
length), with a tool span per tool call, until it holds ``--mb`` MB. Imports it with
``traceloupe import --from otlp`` into a fresh SQLite store, writes that store's export (the same messages
in our format), imports that into another fresh store, each in a child process of its own. Printed: each
import's seconds (wall and CPU), peak RSS (``ru_maxrss``) and messages per second, and the ratio of the two
rates (the issue's target: within 2x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

WORDS = ["the", "agent", "looked", "up", "the", "weather", "and", "the", "flights", "then", "booked", "a", "table"]


def _text(seed: int, words: int) -> str:
    """Text that differs from one conversation to the next, as real questions and answers do."""
    return f"#{seed} " + " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(words))


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def conversation_spans(n: int, turns: int, start_ns: int) -> list[dict[str, Any]]:
    """One conversation: per turn, a chat span that calls a tool, the tool span, a chat span that answers."""
    trace = f"{n:032x}"
    # One system prompt for every conversation, as one agent has.
    history: list[dict[str, Any]] = [{"role": "system", "parts": [{"type": "text", "content": _text(0, 40)}]}]
    spans: list[dict[str, Any]] = []
    clock = start_ns
    for turn in range(turns):
        history.append({"role": "user", "parts": [{"type": "text", "content": _text(n * 100 + turn, 30)}]})
        call_id = f"call_{n}_{turn}"
        calls = [
            (
                [{"type": "tool_call", "id": call_id, "name": "search", "arguments": {"q": _text(turn, 6)}}],
                None,
            ),
            ([{"type": "text", "content": _text(n * 7 + turn, 60)}], None),
        ]
        for step, (parts, _) in enumerate(calls):
            out = [{"role": "assistant", "parts": parts}]
            span_id = f"{n:08x}{turn:04x}{step:04x}"
            spans.append(
                {
                    "traceId": trace,
                    "spanId": span_id,
                    "name": "chat model",
                    "startTimeUnixNano": str(clock),
                    "endTimeUnixNano": str(clock + 1_000_000),
                    "attributes": [
                        _attr("gen_ai.operation.name", "chat"),
                        _attr("gen_ai.request.model", "model-x"),
                        _attr("gen_ai.input.messages", history),
                        _attr("gen_ai.output.messages", out),
                        _attr("gen_ai.usage.input_tokens", 100 + turn),
                    ],
                }
            )
            clock += 2_000_000
            history = [*history, *out]
            if step == 0:
                result = _text(n + 3 * turn, 50)
                spans.append(
                    {
                        "traceId": trace,
                        "spanId": f"{n:08x}{turn:04x}ffff",
                        "name": "execute_tool search",
                        "startTimeUnixNano": str(clock),
                        "endTimeUnixNano": str(clock + 500_000),
                        "attributes": [
                            _attr("gen_ai.operation.name", "execute_tool"),
                            _attr("gen_ai.tool.name", "search"),
                            _attr("gen_ai.tool.call.id", call_id),
                            _attr("gen_ai.tool.call.result", result),
                        ],
                    }
                )
                history.append(
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": result}]}
                )
                clock += 1_000_000
    return spans


def write_otlp(path: Path, megabytes: int, turns: int, document: bool = False) -> int:
    """The file, batch by batch, until it holds ``megabytes`` MB; the conversations written. JSON lines of
    requests, as the collector's file exporter writes, or with ``document`` one request of many batches."""
    target = megabytes * 1_000_000
    written = n = 0
    with path.open("wb") as out:
        if document:
            out.write(b'{"resourceSpans": [\n')
        while written < target:
            spans: list[dict[str, Any]] = []
            while len(spans) < 100:
                spans.extend(conversation_spans(n, turns, 1_700_000_000_000_000_000 + n * 10**9))
                n += 1
            scope = {"scope": {"name": "bench"}, "spans": spans}
            batch = {"resource": {"attributes": [_attr("service.name", "bench")]}, "scopeSpans": [scope]}
            if document:
                data = (b",\n" if written else b"") + orjson.dumps(batch)
            else:
                data = orjson.dumps({"resourceSpans": [batch]}) + b"\n"
            out.write(data)
            written += len(data)
        if document:
            out.write(b"\n]}\n")
    return n


def child(args: list[str]) -> None:
    """In the child: one ``traceloupe`` command, then its seconds and peak RSS as one JSON line."""
    import contextlib
    import io
    import resource

    from web.cli import main

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as said, contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    print(json.dumps({"code": code, "seconds": seconds, "cpu": cpu, "peak_mb": peak, "said": said.getvalue()[-300:]}))


def run_child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(args)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--document", action="store_true", help="one JSON document instead of JSON lines")
    parser.add_argument("--child")
    ns = parser.parse_args()
    if ns.child:
        child(json.loads(ns.child))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = ns.keep or Path(tmp)
        otlp_file = folder / "spans.json"
        conversations = write_otlp(otlp_file, ns.mb, ns.turns, ns.document)
        size = otlp_file.stat().st_size / 1e6
        a, b, exported = folder / "a.db", folder / "b.db", folder / "export.jsonl"
        for db in (a, b):
            db.unlink(missing_ok=True)
        foreign = run_child(["import", "--from", "otlp", str(otlp_file), "--db", f"sqlite:///{a}"])
        run_child(["export", "--db", f"sqlite:///{a}", "-o", str(exported)])
        own = run_child(["import", str(exported), "--db", f"sqlite:///{b}"])
        messages = sum(1 for line in exported.open("rb") if b'"traceloupe_' not in line[:20])
        records = conversations * (1 + 1 + ns.turns * 4)  # system, turns' users, and each turn's four records
        print(
            f"OTLP/JSON: {size:.0f} MB, {conversations} conversations, {messages} top-level messages, "
            f"~{records} records"
        )
        for name, result in (("import --from otlp", foreign), ("import (our JSONL)", own)):
            rate = records / result["seconds"]
            print(
                f"{name:22} {result['seconds']:7.1f} s ({result['cpu']:.1f} s CPU)  "
                f"peak RSS {result['peak_mb']:6.0f} MB  {rate:9.0f} records/s"
            )
        # CPU seconds too: on a shared machine the wall clock also counts the time other processes ran.
        print(
            f"rate ratio (ours / otlp): {own['seconds'] and foreign['seconds'] / own['seconds']:.2f}, "
            f"by CPU time {own['cpu'] and foreign['cpu'] / own['cpu']:.2f}"
        )


if __name__ == "__main__":
    main()
