"""Secrets inside imported traces: masked on every page and in the API, one value revealed per click, data untouched."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER, Message
from core.store import NewRun
from tests.web.web_corpus import BASE_URL, import_messages, temp_store
from web import masking, urls
from web.app import create_app
from web.settings import Settings

OPENAI = "sk-proj-" + "Zx9Qw8Er7Ty6" * 4
ANTHROPIC = "sk-ant-api03-" + "AbCdEf123456" * 5
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
BEARER = "ya29.a0AfH6SMBx3kq9" + "Lr2Vt5Wy8Zb1" * 3
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
GOOGLE = "AIzaSyD-" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXy"[:31]
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7v1\nq2w3e4r5t6\n-----END RSA PRIVATE KEY-----"

SAMPLES = {
    "openai key": f"use {OPENAI} here",
    "anthropic key": f"x-api-key: {ANTHROPIC}",
    "aws access key": f"aws_access_key_id = {AWS_ID}",
    "aws secret key": f"aws_secret_access_key = {AWS_SECRET}",
    "bearer token": f"Authorization: Bearer {BEARER}",
    "google api key": f"https://generativelanguage.googleapis.com/v1?key={GOOGLE}",
    "github token": f"token {GITHUB}",
    "jwt": f"Authorization: Bearer {JWT}",
    "private key": f"key file:\n{PEM}\nend",
}
VALUES = {
    "openai key": OPENAI,
    "anthropic key": ANTHROPIC,
    "aws access key": AWS_ID,
    "aws secret key": AWS_SECRET,
    "bearer token": BEARER,
    "google api key": GOOGLE,
    "github token": GITHUB,
    "jwt": JWT,
    "private key": PEM,
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_well_known_shape_is_masked_and_revealed_alone(kind: str) -> None:
    text = SAMPLES[kind]
    masked = masking.mask(text)
    assert VALUES[kind] not in masked
    assert f"masked {kind} #" in masked
    (secret,) = [s.secret for s in masking.segments(text) if s.secret]
    assert VALUES[kind] not in repr(secret)  # a segment carries the masked form and digest only
    assert masking.reveal([text], secret.digest) == VALUES[kind]
    assert masking.reveal([text], "0" * 12) is None


@pytest.mark.parametrize(
    "prose",
    [
        "the bearer instrument is void",
        "Bearer tokens are explained in RFC 6750",
        "pip install scikit-learn; sk-learn is not a key",
        "Basic understanding of authorization",
        "task-1234567890123456789012 done",
        "AKIA is a prefix; AKIAshort",
    ],
)
def test_prose_is_left_alone(prose: str) -> None:
    assert masking.mask(prose) == prose


def test_masking_twice_changes_nothing() -> None:
    once = masking.mask(" ".join(SAMPLES.values()))
    assert masking.mask(once) == once


def test_a_cut_never_splits_a_key() -> None:
    text = "a" * 19_990 + " " + OPENAI + " tail"
    at = masking.safe_cut(text, 20_000)
    assert at == 19_991
    assert OPENAI[:8] not in text[:at]


def _msg(**fields: Any) -> Message:
    return MESSAGE_ADAPTER.validate_python({"conversation_id": "c-keys", **fields})


def _conversation() -> list[Message]:
    call = {"id": "c1", "name": "http_get", "arguments": f'{{"headers": {{"Authorization": "Bearer {BEARER}"}}}}'}
    return [
        _msg(
            role="user",
            msg_type="text",
            msg_id="u1",
            create_ts=1,
            content=f"my key is {OPENAI}, please check",
            additional_kwargs={"env": {"AWS_ACCESS_KEY_ID": AWS_ID}},
        ),
        _msg(role="assistant", msg_type="text", msg_id="a1", create_ts=2, content="", tool_calls=[call]),
        _msg(
            role="tool",
            msg_id="t1",
            create_ts=3,
            tool_reses=[{"call_id": "c1", "result": f"200 OK; echo {ANTHROPIC}; " + "x" * 19_990 + f" {GITHUB}"}],
        ),
        _msg(role="assistant", msg_type="text", msg_id="a2", create_ts=4, content=f"Your key {OPENAI} works."),
    ]


SECRETS = (OPENAI, ANTHROPIC, AWS_ID, BEARER, GITHUB)


@pytest.fixture(scope="module")
def keys_client() -> Iterator[TestClient[Litestar]]:
    store = temp_store()
    import_messages(store, _conversation())
    body = {"messages": [{"role": "user", "content": f"my key is {OPENAI}"}]}
    run = store.start_run(NewRun("c-keys", provider="openai", model="gpt-4.1", request_body=body, up_to_msg_id="a2"))
    store.finish_run(run.run_id, status="http_error", response_body={"echo": ANTHROPIC}, error=f"bad key {OPENAI}")
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as client:
        client.store = store  # type: ignore[attr-defined]
        yield client


def _pages(client: TestClient[Litestar]) -> dict[str, str]:
    cid = "c-keys"
    found = {
        "list": "/",
        "search": "/?q=key",
        # Searching for the middle of a key: the snippet's match and its context must not show the key in pieces.
        "search inside a key": "/?q=Er7Ty6Zx9",
        "timeline": urls.conversation(cid),
        "payload openai": urls.payload(cid, "openai"),
        "payload anthropic": urls.payload(cid, "anthropic", upto="a2"),
        "phases": urls.phases(cid, "gemini"),
        "diff": urls.diff(cid, "openai", "anthropic"),
        "field": urls.record_field(cid, "t1", "/tool_reses/0/result"),
        "api list": "/api/conversations",
        "api messages": urls.api_conversation(cid),
        "api payload": urls.api_payload(cid, "openai") + "?phases=1",
        "api diff": urls.api_diff(cid, "openai", "gemini"),
        "api field": urls.api_record_field(cid, "t1", "/tool_reses/0/result"),
    }
    (run,) = client.store.list_runs("c-keys")[0]  # type: ignore[attr-defined]
    found |= {
        "run": urls.run(run.run_id),
        "replays": urls.replays(cid),
        "api run": urls.api_run(run.run_id),
        "api runs": "/api/runs?bodies=1",
        "api conversation runs": urls.api_runs(cid) + "?bodies=1",
    }
    return found


def test_no_page_and_no_api_answer_shows_a_secret(keys_client: TestClient[Litestar]) -> None:
    for name, path in _pages(keys_client).items():
        response = keys_client.get(path)
        assert response.status_code == 200, name
        for secret in SECRETS:
            assert secret not in response.text, (name, secret[:10])
            assert secret[:12] not in response.text, (name, secret[:10])
        if name not in ("list", "search"):  # the search inside a key shows it masked
            assert "masked" in response.text, name


def test_a_click_reveals_one_value_from_its_digest(keys_client: TestClient[Litestar]) -> None:
    html = keys_client.get(urls.conversation("c-keys")).text
    digests = set(re.findall(r'data-secret="([0-9a-f]+)"', html))
    assert len(digests) >= 3
    revealed = {keys_client.get(urls.secrets("c-keys") + d).json()["value"] for d in digests}
    assert {OPENAI, ANTHROPIC, AWS_ID} <= revealed
    assert keys_client.get(urls.secrets("c-keys") + "0123456789ab").status_code == 404


def test_the_payload_page_reveals_a_key_inside_its_json(keys_client: TestClient[Litestar]) -> None:
    html = keys_client.get(urls.payload("c-keys", "openai")).text
    (bearer,) = {d for d in re.findall(r'data-secret="([0-9a-f]+)"', html) if d == masking.digest(BEARER)}
    assert keys_client.get(urls.secrets("c-keys") + bearer).json()["value"] == BEARER


def test_the_stored_data_and_the_export_keep_the_secrets(keys_client: TestClient[Litestar]) -> None:
    store = keys_client.store  # type: ignore[attr-defined]
    stored = [m.message for m in store.get_conversation("c-keys").messages]
    assert OPENAI in stored[0].content
    assert stored[2].tool_reses[0].result.endswith(GITHUB)
    exported = "".join(str(body) for body in store.export_bodies("c-keys"))
    for secret in SECRETS:
        assert secret in exported
