"""Input errors are one line a terminal shows as text, whatever keys the file's JSON path spells."""

from __future__ import annotations

from core.errors import InputError


def test_a_path_through_a_key_with_control_characters_is_one_line_with_their_escapes() -> None:
    error = InputError("a key contains U+0000", source="f.jsonl", line=3, path="$.a\nb\x00\x1b[31m\x9b")
    assert str(error) == "f.jsonl:3 at $.a\\u000ab\\u0000\\u001b[31m\\u009b: a key contains U+0000"
    assert error.path == "$.a\nb\x00\x1b[31m\x9b"  # the path itself is kept as the file spells it


def test_a_plain_path_is_printed_as_it_is() -> None:
    assert str(InputError("bad", source="f.jsonl", line=1, path="$.records[2].msg_type")).endswith(
        " at $.records[2].msg_type: bad"
    )
