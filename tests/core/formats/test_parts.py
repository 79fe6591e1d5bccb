"""A file assembled a part at a time gives what one assembly of the whole file gives, and a part is what no
transcript spans: conversations that share nothing are assembled (and let go) one by one."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.formats import part_index, parts
from core.formats.assemble import ImportNote, assemble_transcripts
from core.formats.events import ConversationKey, Event, ModelCall, SourceRef, ToolExecution
from core.formats.registry import SNIFF_BYTES, sniff
from core.llm.messages import LLMAssistantMessage, LLMSystemMessage, LLMTextPart, LLMToolCall, LLMUserMessage

DATA = Path(__file__).parents[2] / "formats" / "data"
TRANSCRIPT_FILES = (p for p in DATA.glob("*/*") if p.suffix in (".json", ".eval", ".pb") and "2parquet" not in p.name)
FILES = [
    *sorted(str(p.relative_to(DATA)) for p in TRANSCRIPT_FILES),
    "provider_logs/openai_chat/ddtrace_test_hierarchical_crew.yaml",
    "provider_logs/anthropic/test_anthropic_tool_output.yaml",
    "provider_logs/gemini/test_google_tool_output.yaml",
]


def _events(name: str) -> list[Event]:
    path = DATA / name
    with path.open("rb") as handle:
        trace_format = sniff(handle.read(SNIFF_BYTES), str(path))
        handle.seek(0)
        assert trace_format.read is not None
        return list(trace_format.read(handle, str(path)))


def _picture(transcripts: list[parts.Transcript]) -> list[list[tuple[str, object]]]:
    return [[(type(e.message).__name__, e.message) for e in t.entries] for t in transcripts]


@pytest.mark.parametrize("name", FILES)
def test_a_real_file_assembled_by_parts_gives_the_whole_files_transcripts(name: str) -> None:
    events = _events(name)
    whole_notes: list[ImportNote] = []
    whole = assemble_transcripts(events, whole_notes)
    by_part_notes: list[ImportNote] = []
    by_part = list(parts.transcripts_by_part(events, by_part_notes))
    assert _picture(by_part) == _picture(whole)
    assert sorted(n.line() for n in by_part_notes) == sorted(n.line() for n in whole_notes)


SYSTEM = LLMSystemMessage("You are a travel agent.")


def _conversation(n: int) -> list[Event]:
    """An agent's conversation of two calls resending the history and a tool run: no key, its own trace."""
    user = LLMUserMessage((LLMTextPart(f"Trip #{n}?"),))
    call = LLMAssistantMessage(tool_calls=(LLMToolCall(f"call_{n}", "search", "{}"),))
    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n)
    source = SourceRef("x.json", source_id=f"span{n}", trace=f"trace{n}")
    answer = LLMAssistantMessage(f"Booked #{n}.")
    tool = SourceRef("x.json", source_id=f"tool{n}", trace=f"trace{n}")
    return [
        ModelCall(source, ConversationKey(), (SYSTEM, user), (call,), started_at=at),
        ToolExecution(tool, ConversationKey(), "search", None, None, "found"),
        ModelCall(source, ConversationKey(), (SYSTEM, user, call), (answer,), started_at=at + timedelta(seconds=30)),
    ]


def test_conversations_that_share_nothing_are_assembled_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assembled_calls: list[int] = []
    whole = parts.assemble_calls

    def counting(calls: list[ModelCall], runs: list[ToolExecution], notes: list[ImportNote]) -> list[parts.Transcript]:
        assembled_calls.append(len(calls))
        return whole(calls, runs, notes)

    monkeypatch.setattr(parts, "assemble_calls", counting)
    events = [e for n in range(3) for e in _conversation(n)]
    transcripts = list(parts.transcripts_by_part(events, []))
    assert assembled_calls == [2, 2, 2]  # one part per conversation, each its two calls
    assert [len(t.entries) for t in transcripts] == [5, 5, 5]  # system, user, call, result, answer
    assert [t.entries[1].message for t in transcripts] == [e.input[1] for e in events[::3]]  # type: ignore[union-attr, index]


def test_a_call_without_a_user_message_joins_every_part_of_its_first_message(monkeypatch: pytest.MonkeyPatch) -> None:
    assembled_calls: list[int] = []
    whole = parts.assemble_calls
    monkeypatch.setattr(parts, "assemble_calls", lambda c, r, n: assembled_calls.append(len(c)) or whole(c, r, n))
    opening = ModelCall(SourceRef("x.json", source_id="s"), ConversationKey(), (SYSTEM,), (LLMAssistantMessage("Hi"),))
    events = [e for n in range(2) for e in _conversation(n)] + [opening]
    list(parts.transcripts_by_part(events, []))
    assert assembled_calls == [5]


def _held_once_assembling(conversations: int) -> int:
    """The memory Python holds once a file of ``conversations`` was read and its first transcript made (the
    events are made as they are read, as a reader yields them)."""
    events = (e for n in range(conversations) for e in _conversation(n))
    gc.collect()
    tracemalloc.start()
    try:
        transcripts = parts.transcripts_by_part(events, [])
        next(transcripts)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        transcripts.close()
        return held
    finally:
        tracemalloc.stop()


def test_what_a_file_is_split_by_is_kept_on_disk_not_in_memory() -> None:
    # Where each event sits, its call ids and trace, its part: held in memory, they grow with the file (about
    # 2 KB a conversation here); four times the conversations must hold about what one time holds.
    small, large = _held_once_assembling(150), _held_once_assembling(600)
    assert large < small + 40_000, (small, large)


def test_ids_that_are_not_valid_unicode_still_tie_their_events() -> None:
    # JSON can spell a lone surrogate (\ud800); a reader keeps it, and the on-disk index must too.
    events = _conversation(0)
    odd = ConversationKey(conversation="session-\ud800")
    keyed = [replace(e, key=odd) for e in events]
    transcripts = list(parts.transcripts_by_part(keyed, []))
    assert [t.key for t in transcripts] == ["session-\ud800"]
    assert len(transcripts[0].entries) == 5


def test_links_written_to_the_index_database_are_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # A few links held: most are written to the database, and found there again (the filter of written nodes must
    # not hide them); the parts are those of an index that holds every link in memory.
    events = [e for n in range(40) for e in _conversation(n)]
    whole = list(parts.transcripts_by_part(events, []))
    monkeypatch.setattr(part_index, "PARENTS_HELD", 3)
    monkeypatch.setattr(part_index, "FLUSHED_SLOTS", 64)  # collisions: some new nodes are looked up anyway
    assert _picture(list(parts.transcripts_by_part(events, []))) == _picture(whole)
    index = part_index.PartIndex()
    try:
        for n in range(50):
            index.join(f"c:{n}", f"k:{n % 7}")
        assert index.flushed is not None
        assert all(index.known(f"c:{n}") for n in range(50))
        assert not any(index.known(f"c:new{n}") for n in range(50))
        roots = [index._find(f"c:{n}".encode()) for n in range(50)]
        assert len(set(roots)) == 7
        assert all(roots[n] == roots[n % 7] for n in range(50))
    finally:
        index.close()
