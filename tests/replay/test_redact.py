"""Secret leakage through echoed answers: every form a provider may echo the key in is removed, JSON keeps its shape."""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import quote

import pytest

from core.providers import provider_named
from core.replay.redact import IN_FLIGHT, REDACTED, Redactor
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
    text = f"sk-cana {CANARY_KEY[:7]} {CANARY_KEY[5:12]} nothing here"
    assert Redactor(KEY).text(text) == text


PROJECT_KEY = "sk-proj-" + "Q7zK2vX9Lm4Rt8Wp1Ns6Bd3Hf5Jc0GyUeAoTiPs"


def _entities(key: str) -> str:
    return "".join(f"&#x{ord(c):x};" if i % 2 else f"&#{ord(c)};" for i, c in enumerate(key))


MORE_ECHOES = {
    "masked-prefix-suffix": f"Incorrect API key provided: {PROJECT_KEY[:12]}{'*' * 30}{PROJECT_KEY[-4:]}.",
    "masked-ellipsis": f"key {PROJECT_KEY[:10]}...{PROJECT_KEY[-4:]} rejected",
    "hex": "hex " + PROJECT_KEY.encode().hex() + " end",
    "hex-upper": "hex " + PROJECT_KEY.encode().hex().upper() + " end",
    "upper": "KEY " + PROJECT_KEY.upper(),
    "html-entities": "<p>" + _entities(PROJECT_KEY) + "</p>",
    "html-named": PROJECT_KEY[:20].replace("-", "&hyphen;") + PROJECT_KEY[20:],
    "zero-width-split": PROJECT_KEY[:20] + "\u200b" + PROJECT_KEY[20:],
    "zero-width-every": "\u200b".join(PROJECT_KEY),
    "middle-window": f"the key has {PROJECT_KEY[17:25]} in it",
}


@pytest.mark.parametrize("form", MORE_ECHOES)
def test_a_normalised_or_partial_echo_of_the_key_is_removed(form: str) -> None:
    cleaned = Redactor(PROJECT_KEY).text(MORE_ECHOES[form])
    assert REDACTED in cleaned
    secret = PROJECT_KEY[len("sk-proj-") :]
    shown = cleaned.lower().replace("\u200b", "")
    assert not any(secret[i : i + 4].lower() in shown for i in range(len(secret) - 3)), cleaned
    assert PROJECT_KEY.encode().hex()[16:32] not in shown


def test_the_public_prefix_alone_is_left_alone() -> None:
    text = "keys start with sk-proj- as the docs say"
    assert Redactor(PROJECT_KEY).text(text) == text


def test_a_debug_log_never_shows_more_of_the_key_than_its_public_prefix(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("httpx")
    with (
        caplog.at_level(logging.DEBUG, logger="httpx"),
        IN_FLIGHT.keep_out(PROJECT_KEY, provider_named("openai").wire.logger),
    ):
        logger.debug("sending with key prefix %s", PROJECT_KEY[:20])
        logger.debug("Authorization: Bearer %s", PROJECT_KEY.upper())
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert PROJECT_KEY[:9] not in logged and PROJECT_KEY[:9].upper() not in logged
    assert logged.count(REDACTED) == 2


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
