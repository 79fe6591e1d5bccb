"""Secret leakage through echoed answers: every form a provider may echo the key in is removed, JSON keeps its shape."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from core.replay.redact import REDACTED, Redactor
from tests.replay.conftest import CANARY_KEY

KEY = CANARY_KEY + "/+Zq"  # punctuation that URL-encoding, JSON escaping and base64 all treat specially


def _json_escaped(key: str) -> str:
    return "".join(f"\\u{ord(c):04X}" if i % 2 else c for i, c in enumerate(key))  # mixed, upper-case hex


ECHOES = {
    "literal": KEY,
    "url-encoded": quote(KEY, safe=""),
    "url-encoded-lower-hex": quote(KEY, safe="").replace("%2F", "%2f").replace("%2B", "%2b"),
    "json-unicode-escaped": _json_escaped(KEY),
    "json-slash-escaped": KEY.replace("/", "\\/"),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "base64-basic-auth": base64.b64encode(f"user:{KEY}".encode()).decode(),
    "base64-offset-2": base64.b64encode(f"ab{KEY}xyz".encode()).decode(),
    "base64-urlsafe": base64.urlsafe_b64encode(f"u:{KEY}".encode()).decode(),
}


def _fragments(key: str) -> list[str]:
    """What must not survive: any 8-character slice of the key, in the echo's own encoding."""
    return [key[i : i + 8] for i in range(len(key) - 7)]


@pytest.mark.parametrize("form", ECHOES)
def test_every_echoed_form_of_the_key_is_removed(form: str) -> None:
    echo = ECHOES[form]
    cleaned = Redactor(KEY).text(f"before {echo} after")
    assert REDACTED in cleaned
    assert cleaned.startswith("before ") and cleaned.endswith(" after")
    assert not any(piece in cleaned for piece in _fragments(KEY))
    if form.startswith("base64"):
        b64 = base64.b64encode(KEY.encode()).decode()
        assert not any(b64[i : i + 8] in cleaned for i in range(4, len(b64) - 12))


@pytest.mark.parametrize("cut", range(1, len(KEY)))
def test_a_key_straddling_the_cut_leaves_no_fragment(cut: int) -> None:
    text = "." * 50 + KEY + " and more"
    clipped = Redactor(KEY).clip(text, 50 + cut)
    assert len(clipped) <= 50 + cut
    assert KEY[:cut] not in clipped  # not even one character of it past the filler


@pytest.mark.parametrize("length", [8, 12, len(KEY) - 1])
def test_a_prefix_of_eight_or_more_at_the_end_is_removed(length: int) -> None:
    # A provider that cut its own echo: only the start of the key is left, at the very end.
    assert Redactor(KEY).text("the key was " + KEY[:length]) == "the key was " + REDACTED


def test_a_short_prefix_or_unrelated_text_is_left_alone() -> None:
    text = f"sk-canar {CANARY_KEY[:7]} nothing here"
    assert Redactor(KEY).text(text) == text


def test_json_is_redacted_value_by_value_and_keeps_its_shape() -> None:
    answer = {
        "type": "message",
        "content": [{"type": "text", "text": f"your key {KEY}"}],
        KEY: [1, 2.5, None, True, {"nested": quote(KEY, safe="")}],
    }
    cleaned = Redactor(KEY).json(answer)
    assert cleaned == {
        "type": "message",
        "content": [{"type": "text", "text": f"your key {REDACTED}"}],
        REDACTED: [1, 2.5, None, True, {"nested": REDACTED}],
    }
    json.loads(json.dumps(cleaned))
