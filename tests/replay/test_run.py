"""Replaying a stored conversation: the adapter's body goes out through each real SDK, every outcome is a Run."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from core import AssistantTextMessage, UnknownNameError
from core.providers import ChatLLM, RequestOptions, dialect_names
from core.replay.run import ProviderUnavailable, prepare, replay, reply_message
from core.store import NewRun, Store
from tests.replay.conftest import CANARY_KEY
from tests.replay.replay_data import CONVERSATION, DAMAGED, FINAL_REPLY, FIRST_REPLY, conversation
from web.devtools.stub_provider import Reply, StubServer

AUTH_HEADER = {"gemini": "x-goog-api-key"}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def normalise_gemini(value: Any, key: str = "") -> Any:
    """docs/providers.md 8.3: drop nulls, camelCase keys, base64 (either alphabet) of data/thoughtSignature to bytes.

    Also drops empty objects: google-genai sends ``generationConfig: {}`` where the body has none.
    """
    if isinstance(value, dict):
        return {_camel(k): normalise_gemini(v, _camel(k)) for k, v in value.items() if v is not None and v != {}}
    if isinstance(value, list):
        return [normalise_gemini(v) for v in value]
    if key in ("data", "thoughtSignature") and isinstance(value, str):
        padded = value + "=" * (-len(value) % 4)
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    return value


def _adapter_body(store: Store, dialect: str, model: str, upto: str | None) -> dict[str, Any]:
    messages = [m.message for m in store.get_conversation(CONVERSATION).messages]
    return ChatLLM(dialect, RequestOptions(model=model)).construct_request_params(messages, upto=upto).body


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("upto", [None, FIRST_REPLY])
def test_the_stub_receives_the_adapters_body_and_the_run_holds_the_reply(
    dialect: str, upto: str | None, store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    stub.state.script.append(Reply(text="It is warm.", tool_calls=[{"name": "weather", "arguments": {"d": 1}}]))
    run = replay(store, CONVERSATION, dialect, "model-x", upto=upto, environ=stub_env, timeout=10)
    assert run.status == "ok", run.error
    assert run.up_to_msg_id == (upto or FINAL_REPLY)  # default: regenerate the final assistant reply
    (seen,) = stub.state.requests
    expected = _adapter_body(store, dialect, "model-x", run.up_to_msg_id)
    assert run.request_body == expected  # what the payload page shows is what was recorded...
    if dialect == "gemini":  # ...and what arrived, after the SDK's REST conversion is undone
        assert seen.path.endswith("/models/model-x:generateContent")
        assert normalise_gemini(seen.body) == normalise_gemini(expected)
    else:
        assert seen.body == expected
    header = AUTH_HEADER.get(dialect, "authorization")
    assert CANARY_KEY in seen.headers[header]
    assert [k for k, v in seen.headers.items() if CANARY_KEY in v] == [header]
    assert CANARY_KEY not in json.dumps(seen.body)
    reply = reply_message(store.get_run(run.run_id))
    assert isinstance(reply, AssistantTextMessage)
    assert reply.content == "It is warm."
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls or ()] == [("weather", {"d": 1})]
    assert run.usage.total_tokens and run.latency_ms is not None and run.response_body


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize(
    ("model", "status", "words"),
    [
        ("stub-error-500", "http_error", "HTTP 500"),
        ("stub-error-429", "rate_limited", "429"),
        ("stub-slow-3", "timeout", "time limit"),
        ("stub-malformed", "malformed", "not JSON"),
    ],
)
def test_failures_are_recorded_runs_with_a_clear_error(
    dialect: str, model: str, status: str, words: str, store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    run = replay(store, CONVERSATION, dialect, model, environ=stub_env, timeout=1.0)
    assert (run.status, run.reply) == (status, None)
    assert run.error is not None and words in run.error
    assert store.get_run(run.run_id).status == status  # recorded, not only returned
    assert run.finished_at is not None and run.request_body


def test_a_reply_that_is_json_but_not_the_providers_shape_is_malformed(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    stub.state.script.append(Reply(raw_body='{"choices": []}'))
    run = replay(store, CONVERSATION, "openai", "m", environ=stub_env, timeout=5)
    assert run.status == "malformed"
    assert "could not be read" in (run.error or "")
    assert run.response_body == {"choices": []}


def test_a_key_echoed_by_the_provider_is_not_stored(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    stub.state.script.append(Reply(text=f"your key is {CANARY_KEY}"))
    run = replay(store, CONVERSATION, "anthropic", "m", environ=stub_env, timeout=5)
    assert run.status == "ok"
    stored = store.get_run(run.run_id)
    assert CANARY_KEY not in json.dumps([stored.response_body, stored.reply, stored.error])
    assert "[redacted]" in json.dumps(stored.reply)


def test_gemini_thought_signatures_are_kept_and_sent_back(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    signature = base64.b64encode(b"\x00\xffsigned").decode()
    stub.state.script.append(
        Reply(text="", tool_calls=[{"name": "weather", "arguments": {}}], thought_signature=signature)
    )
    run = replay(store, CONVERSATION, "gemini", "gemini-x", environ=stub_env, timeout=10)
    reply = reply_message(run)
    assert reply is not None and reply.tool_calls
    stored_signature = (reply.tool_calls[0].model_extra or {})["thought_signature"]
    assert base64.b64decode(stored_signature) == b"\x00\xffsigned"
    # The reply, stored as history, sends its signature back on the same part (core.providers.dialects.gemini).
    history = [m.message for m in store.get_conversation(CONVERSATION).messages]
    body = ChatLLM("gemini").construct_request_params([*history, reply]).body
    model_parts = [p for c in body["contents"] if c["role"] == "model" for p in c["parts"]]
    assert model_parts[-1]["thoughtSignature"] == stored_signature


def test_a_damaged_record_is_a_recorded_refusal(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    run = replay(store, DAMAGED, "openai", "m", environ=stub_env)
    assert run.status == "refused"
    assert "TFROB-299" in (run.error or "") and "助理消息需要子类实现转换过程" in (run.error or "")
    assert stub.state.requests == []  # nothing went out


def test_without_a_key_nothing_is_attempted_and_the_variable_is_named(store: Store) -> None:
    with pytest.raises(ProviderUnavailable, match="ANTHROPIC_API_KEY"):
        prepare(store, CONVERSATION, "anthropic", "m", environ={"OPENAI_API_KEY": CANARY_KEY})
    with pytest.raises(UnknownNameError):
        prepare(store, CONVERSATION, "openai", "m", upto="no-such-msg", environ={"OPENAI_API_KEY": CANARY_KEY})
    with pytest.raises(UnknownNameError):
        prepare(store, "no-such-conv", "openai", "m", environ={"OPENAI_API_KEY": CANARY_KEY})
    assert store.list_runs() == ((), None)


def test_one_idempotency_key_one_provider_call(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    a = replay(store, CONVERSATION, "openai", "m", environ=stub_env, idempotency_key="k-1")
    b = replay(store, CONVERSATION, "openai", "m", environ=stub_env, idempotency_key="k-1")
    assert a.run_id == b.run_id and len(stub.state.requests) == 1


def test_a_base_url_recorded_in_the_trace_is_ignored(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """security.md #6: routing and auth come from the operator's environment, never from the trace."""
    trap = StubServer().start()
    try:
        lines = conversation("conv-trap")
        for msg in lines:
            msg["additional_kwargs"] = {"base_url": f"{trap.base_url}/v1", "api_base": trap.base_url}
            msg["base_url"] = f"{trap.base_url}/v1"  # an unknown key, kept by the parser
        path = tmp_path / "trap.jsonl"
        path.write_text("\n".join(json.dumps(m) for m in lines) + "\n")
        with Store.open(str(tmp_path / "trap.db")) as store:
            store.import_path(path)
            for dialect in ("openai", "anthropic", "gemini"):
                assert replay(store, "conv-trap", dialect, "m", environ=stub_env, timeout=5).status == "ok"
        assert trap.state.requests == []
        assert len(stub.state.requests) == 3
    finally:
        trap.shutdown()
        trap.server_close()


# -- the key scrubber: a short key, a key that is a word of the answer -----------------------------------


@pytest.mark.parametrize("key", ["x", "e", "1234567"])
def test_a_key_shorter_than_eight_characters_is_refused_before_anything_is_sent(
    key: str, store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    env = {**stub_env, "OPENAI_API_KEY": key}
    with pytest.raises(ProviderUnavailable, match=r"OPENAI_API_KEY holds .* at least 8"):
        prepare(store, CONVERSATION, "openai", "gpt-4.1", environ=env)
    assert stub.state.requests == [] and store.list_runs() == ((), None)


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_key_that_is_a_word_of_the_answer_leaves_the_reply_readable(
    dialect: str, store: Store, stub: StubServer, stub_env: dict[str, str], tmp_path: Path
) -> None:
    # The key is a word the reply's own structure uses ("role": "assistant"): removing it from the
    # raw text would rewrite the message's tag, store the run as ok and break every page showing it.
    key = "assistant"
    env = {k: key if k.endswith("_API_KEY") else v for k, v in stub_env.items()}
    # The call names the conversation's own tool (the request offers it, inferred from the recorded call).
    stub.state.script.append(
        Reply(text="I am your assistant.", tool_calls=[{"name": "weather", "arguments": {"who": "assistant"}}])
    )
    run = replay(store, CONVERSATION, dialect, "m", environ=env, timeout=10)
    assert run.status == "ok", run.error
    reply = reply_message(store.get_run(run.run_id))
    assert isinstance(reply, AssistantTextMessage)
    assert reply.content == "I am your [redacted]."
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls or ()] == [("weather", {"who": "[redacted]"})]
    assert key not in json.dumps(store.get_run(run.run_id).response_body)
    assert key not in json.dumps({k: v for k, v in (store.get_run(run.run_id).reply or {}).items() if k != "role"})


def test_a_run_stored_with_an_unreadable_reply_has_no_reply_instead_of_failing(store: Store) -> None:
    run, _ = store.claim_run(NewRun(CONVERSATION, provider="openai", model="m", request_body={}, up_to_msg_id=None))
    broken = {"role": "assistant", "msg_type": "te[redacted]t", "content": "hi", "msg_id": "r", "conversation_id": "c"}
    finished = store.finish_run(run.run_id, status="ok", reply=broken)
    assert reply_message(finished) is None
