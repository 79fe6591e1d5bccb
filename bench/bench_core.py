"""Core benchmark: typed load/dump of a 10,000-record trace against a minimal pydantic floor and orjson.

Run: .venv/bin/python -m bench.bench_core   (prints figures and ratios measured in this one process)

Targets: load and dump each within 1.3x of the floor model; retained memory at most 6x the
JSON size; ``import core`` under 0.5 s cold; ``traceloupe --help`` under 1 s.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, Field, TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the checkout, as its siblings

from bench.timing import best_of_rounds
from bench.trace_fixture import build_trace_message
from core import MESSAGE_ADAPTER


# The floor: the least a pydantic model of the same wire shape can do (no extras kept,
# a Rust-side literal discriminator, no callable, no path/URL types).
class FloorToolCall(BaseModel):
    id: str
    name: str
    arguments: str


class FloorToolReturn(BaseModel):
    call_id: str
    name: str | None
    result: str
    attachments: list[dict[str, Any]]
    is_error: bool


class _FloorBase(BaseModel):
    content: str
    tool_calls: list[FloorToolCall] | None
    tool_reses: list[FloorToolReturn] | None
    function_call: dict[str, Any] | None
    function_res: dict[str, Any] | None
    console_reses: list[Any] | None
    tfl_scripts: list[str] | None
    additional_kwargs: dict[str, Any]
    create_ts: int
    creator: dict[str, Any] | None
    group: dict[str, Any] | None
    msg_id: str
    conversation_id: str


class FloorAssistant(_FloorBase):
    role: Literal["assistant"]
    msg_type: Literal["text"]
    reasoning_content: str | None


class FloorTool(_FloorBase):
    role: Literal["tool"]


class FloorTrace(BaseModel):
    records: list[Annotated[FloorAssistant | FloorTool, Field(discriminator="role")]]


class FloorUser(_FloorBase):
    role: Literal["user"]
    msg_type: Literal["text"]
    intermediate_trace: FloorTrace


FLOOR = TypeAdapter(FloorUser)


def retained_bytes(fn: Callable[[], Any]) -> int:
    """Bytes still allocated while the result of ``fn`` is alive."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = fn()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return after - before


def cold_seconds(code: str, runs: int = 5) -> float:
    """Median wall time of a fresh interpreter running ``code``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    message = build_trace_message(10_000)
    data = MESSAGE_ADAPTER.dump_json(message)
    typed = MESSAGE_ADAPTER.validate_json(data)
    floor = FLOOR.validate_json(data)
    assert orjson.loads(FLOOR.dump_json(floor)) == orjson.loads(data), "the floor must read the same wire shape"

    # Interleaved rounds (bench/timing.py). Like for like: the collector paused for both contenders
    # (the door pauses it itself); then everything with the collector on, as a caller would see it.
    dump_orjson_obj = orjson.loads(data)
    paused = best_of_rounds(
        9,
        {
            "load": lambda: MESSAGE_ADAPTER.validate_json(data),
            "load_floor": lambda: FLOOR.validate_json(data),
            "load_orjson": lambda: orjson.loads(data),
            "dump": lambda: MESSAGE_ADAPTER.dump_json(typed),
            "dump_floor": lambda: FLOOR.dump_json(floor),
            "dump_orjson": lambda: orjson.dumps(dump_orjson_obj),
        },
        collector=False,
    )
    live = best_of_rounds(
        5,
        {
            "door": lambda: MESSAGE_ADAPTER.validate_json(data),
            "raw": lambda: MESSAGE_ADAPTER.adapter.validate_json(data),
            "floor": lambda: FLOOR.validate_json(data),
        },
    )
    load, load_floor, load_orjson = paused["load"], paused["load_floor"], paused["load_orjson"]
    dump, dump_floor, dump_orjson = paused["dump"], paused["dump_floor"], paused["dump_orjson"]
    memory = retained_bytes(lambda: MESSAGE_ADAPTER.validate_json(data))
    memory_floor = retained_bytes(lambda: FLOOR.validate_json(data))

    print(f"trace: 10,000 records, {len(data) / 1e6:.2f} MB of JSON (best of interleaved rounds, ms)")
    print(f"load  typed {load:7.1f} | floor {load_floor:7.1f} | orjson.loads {load_orjson:6.1f}  (collector paused)")
    print(
        f"      ratio to the floor {load / load_floor:.2f}x (target <= 1.3) | to orjson.loads {load / load_orjson:.2f}x"
    )
    print(f"dump  typed {dump:7.1f} | floor {dump_floor:7.1f} | orjson.dumps {dump_orjson:6.1f}")
    print(
        f"      ratio to the floor {dump / dump_floor:.2f}x (target <= 1.3) | to orjson.dumps {dump / dump_orjson:.2f}x"
    )
    print(
        f"with the collector on: the door {live['door']:.1f} (it pauses the collector) | the bare TypeAdapter "
        f"{live['raw']:.1f} | the floor {live['floor']:.1f}  -> door/floor {live['door'] / live['floor']:.2f}x"
    )
    print(
        f"memory retained {memory / 1e6:.1f} MB = {memory / len(data):.2f}x the JSON (target <= 6) "
        f"| floor {memory_floor / len(data):.2f}x"
    )
    print(f"import core cold   {cold_seconds('import core') * 1e3:6.0f} ms (target < 500)")
    help_code = "import sys; sys.argv=['traceloupe','--help']; from web.cli import main; main()"
    print(f"traceloupe --help  {cold_seconds(help_code) * 1e3:6.0f} ms (target < 1000)")


if __name__ == "__main__":
    main()
