"""Export lines of every kind: each table is exported or left out on purpose, and an import of them keeps the
messages' rules (the same record again is a no-op, a different one refuses the file naming the line and the id)."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from sqlalchemy import inspect

from core.errors import InputError
from core.store import Store
from core.store.export_lines import BY_TABLE, KINDS, NOT_EXPORTED
from core.suites import Suites
from tests.store.every_kind import fill_every_kind

INFRASTRUCTURE = (
    "alembic_version",
    "message_fts_",
    "conversation_fts_",
    "message_grams_",
    "search_piece_fts_",
    "conversation_grams_",
    "procrastinate_",
)
"""Tables of the tools beneath the store: the migrations' version, SQLite's FTS5 shadow tables, the PG queue's."""


def test_every_table_is_exported_or_left_out_for_a_stated_reason(store: Store) -> None:
    tables = {t for t in inspect(store.engine).get_table_names() if not t.startswith(INFRASTRUCTURE)}
    assert set(BY_TABLE).isdisjoint(NOT_EXPORTED)
    sqlite_only = {"message_fts", "conversation_fts", "message_grams", "search_piece_fts"}
    postgresql_only = {"search_chunks"}
    on_this_backend = postgresql_only if store.backend == "postgresql" else sqlite_only
    indexes = {*postgresql_only, *sqlite_only}  # conversation_grams: on both (revision 0031)
    assert tables == set(BY_TABLE) | set(NOT_EXPORTED) - (indexes - on_this_backend)


def test_format_md_lists_every_kind_in_the_order_an_export_writes_them() -> None:
    doc = (Path(__file__).resolve().parents[2] / "core" / "FORMAT.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(traceloupe_\w+)` \|", doc, re.M)
    assert listed == [kind.key for kind in KINDS]


def _export(store: Store) -> list[bytes]:
    """The store's export as the CLI writes it (messages, then one sorted-key line per record)."""
    messages = [text.encode() for text in store.export_texts()]
    return messages + [orjson.dumps(line, option=orjson.OPT_SORT_KEYS) for line in store.export_records()]


@pytest.fixture
def exported(tmp_path: Path) -> list[bytes]:
    with Store.open(str(tmp_path / "source.db")) as source:
        fill_every_kind(source)
        return _export(source)


def _write(tmp_path: Path, lines: list[bytes], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _edit(lines: list[bytes], key: str, n: int = 0, **values: object) -> tuple[list[bytes], int]:
    """The lines with the ``n``-th line of ``key`` changed, and that line's number."""
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"' + key.encode() + b'":')][n]
    value = orjson.loads(lines[at])
    value[key].update(values)
    return [*lines[:at], orjson.dumps(value), *lines[at + 1 :]], at + 1


def test_the_same_records_again_are_skipped(store: Store, exported: list[bytes], tmp_path: Path) -> None:
    path = _write(tmp_path, exported)
    assert store.import_path(path).records["step"] == 4
    again = store.import_path(path)
    assert (again.imported, dict(again.records)) == (0, {})
    assert _export(store) == exported


def test_a_different_record_under_a_stored_id_refuses_the_file_naming_line_and_id(
    store: Store, exported: list[bytes], tmp_path: Path
) -> None:
    store.import_path(_write(tmp_path, exported))
    new_message = b'{"role":"system","content":"new","conversation_id":"new","create_ts":1,"msg_id":"n"}'
    changed, line = _edit([new_message, *exported], "traceloupe_step", 1, verdict="diverged")
    path = _write(tmp_path, changed, "changed.jsonl")
    with pytest.raises(InputError) as caught:
        store.import_path(path)
    step_run = orjson.loads(changed[line - 1])["traceloupe_step"]["step_run_id"]
    assert str(caught.value) == (
        f"{path}:{line} at $.traceloupe_step.step_run_id: step (step_run_id {step_run!r}, position 2) differs from "
        "the one already stored; import with --replace to store this version instead"
    )
    assert store.counts()["conversations"] == 3  # nothing from the file: not even its new message

    replaced = store.import_path(path, replace=True)
    assert (replaced.imported, dict(replaced.records)) == (1, {"step": 1})
    assert [s.verdict for s in store.get_step_run(step_run).steps] == ["same", "diverged"]


def test_a_suite_run_changed_in_place_takes_its_place_with_replace(
    store: Store, exported: list[bytes], tmp_path: Path
) -> None:
    store.import_path(_write(tmp_path, exported))
    changed, line = _edit(exported, "traceloupe_suite_run", 1, model="gpt-z")
    path = _write(tmp_path, changed, "changed.jsonl")
    with pytest.raises(InputError, match=rf":{line} at \$\.traceloupe_suite_run\.run_id: suite run '\w+' differs"):
        store.import_path(path)
    store.import_path(path, replace=True)
    assert [r.model for r in Suites(store).runs("nightly")] == ["gpt-z", "gpt-x"]
    assert Suites(store).runs("nightly")[0].baseline_run_id == Suites(store).runs("nightly")[1].run_id


def test_two_versions_of_one_record_in_a_file_refuse_it(store: Store, exported: list[bytes], tmp_path: Path) -> None:
    suite = next(line for line in exported if line.startswith(b'{"traceloupe_suite"'))
    other = suite.replace(b'"created_at":', b'"created_at":1', 1)
    path = _write(tmp_path, [suite, other])
    with pytest.raises(InputError, match=r":2 at \$\.traceloupe_suite\.name: suite 'nightly' appears twice with "):
        store.import_path(path)


def test_a_record_naming_what_is_neither_stored_nor_in_the_file_refuses_it(
    store: Store, exported: list[bytes], tmp_path: Path
) -> None:
    members = [line for line in exported if line.startswith(b'{"traceloupe_suite_member"')]
    path = _write(tmp_path, members[:1])
    with pytest.raises(InputError) as caught:
        store.import_path(path)
    assert str(caught.value) == (
        f"{path}:1 at $.traceloupe_suite_member.suite: suite member (suite 'nightly', position 0) names suite "
        "'nightly', neither stored nor in this file"
    )


def test_a_record_holding_another_records_idempotency_key_refuses_the_file(
    store: Store, exported: list[bytes], tmp_path: Path
) -> None:
    store.import_path(_write(tmp_path, exported))
    changed, line = _edit(exported, "traceloupe_step_run", 0, run_id="other", idempotency_key="steps-key-1")
    with pytest.raises(InputError, match=rf":{line} at \$\.traceloupe_step_run\.idempotency_key: step run 'other': "):
        store.import_path(_write(tmp_path, changed, "changed.jsonl"))


def test_an_unknown_kind_or_a_bad_field_names_the_line(store: Store, exported: list[bytes], tmp_path: Path) -> None:
    path = _write(tmp_path, [b'{"traceloupe_annotation":{"note":"later"}}'])
    known = ", ".join(kind.key for kind in KINDS)
    with pytest.raises(InputError, match=f"unknown record kind 'traceloupe_annotation'; known: {known}"):
        store.import_path(path)
    changed, line = _edit(exported, "traceloupe_suite_run_item", 0, outcome="great")
    path = _write(tmp_path, changed)
    with pytest.raises(InputError, match=rf":{line} at \$\.traceloupe_suite_run_item\.outcome: not a suite run item: "):
        store.import_path(path)
