"""A provider log's recorded request body kept on the first reply of its call, read back as it was recorded, and
compared with a body built elsewhere by the round trip's own classification."""

from __future__ import annotations

from pathlib import Path

import orjson

from core.formats.importing import read_foreign
from core.formats.records import import_marks, recorded_request
from core.formats.registry import format_named
from core.formats.roundtrip import compare_bodies, round_trip
from core.providers.registry import provider_named

DATA = Path(__file__).parents[2] / "formats" / "data" / "provider_logs"
CASSETTE = DATA / "anthropic" / "test_anthropic_tool_output.yaml"


def _replies() -> list[dict[str, object]]:
    with CASSETTE.open("rb") as handle:
        records, _ = read_foreign(format_named("provider-log"), handle, str(CASSETTE))
    [user] = [r.raw for r in records if r.raw["role"] == "user"]
    return [r for r in user["intermediate_trace"]["records"] if r["role"] == "assistant"]  # type: ignore[index]


def test_each_calls_first_reply_keeps_the_body_its_call_recorded_and_check_reports_nothing_of_it() -> None:
    replies = _replies()
    kept = [recorded_request(r.get("additional_kwargs")) for r in replies]
    assert [k.provider if k else None for k in kept] == ["anthropic", "anthropic"]
    assert kept[0] is not None and kept[1] is not None
    assert [len(k.body["messages"]) for k in (kept[0], kept[1])] == [1, 3]  # the second resends the tool round
    assert orjson.loads(orjson.dumps(kept[0].body))["model"] == "claude-sonnet-4-5"
    marks = [line for r in replies for line in import_marks(r)]
    assert marks and not any("recorded_request" in line for line in marks)  # usage is unplaced; the body is not


def test_comparing_a_recorded_body_with_its_rebuild_gives_the_round_trips_differences() -> None:
    recorded = recorded_request(_replies()[1].get("additional_kwargs"))
    assert recorded is not None
    dialect = provider_named("anthropic")
    trip = round_trip(dialect, recorded.body)
    assert compare_bodies(dialect, recorded.body, trip.built) == trip.differences
    changed = {**trip.built, "temperature": 0.9}
    [bug] = [d for d in compare_bodies(dialect, recorded.body, changed) if d.normalisation is None]
    assert (bug.path, bug.kind, bug.built) == ("/temperature", "added", 0.9)
