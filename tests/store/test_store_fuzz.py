"""Fuzzing the reader: random bytes and mutated valid files (``tests/store/fuzz_files.py``) are read, or refused with
an input error of one line naming the source; never another exception. The import of the same inputs, on both
backends, is fuzzed in ``tests/cli/test_import.py``.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from core.errors import InputError
from core.reader import read_bytes
from tests.long_runs import examples
from tests.store.fuzz_files import DEEP, FILES, fuzz


@fuzz(examples(100, long=200))
@given(data=FILES, suffix=st.sampled_from(["jsonl", "json"]))
@example(data=DEEP, suffix="jsonl")
def test_reader_reads_or_refuses_with_input_error(data: bytes, suffix: str) -> None:
    try:
        records = list(read_bytes(data, source=f"fuzz.{suffix}"))
    except InputError as exc:
        assert str(exc).startswith(f"fuzz.{suffix}") and "\n" not in str(exc)
        return
    for record in records:
        assert isinstance(record.raw, dict)
