"""Re-run a stored conversation against a provider and record what happened as a Run.

::

    prepare(store, conversation, provider, model, upto)   build the body ChatLLM builds (the payload page's)
    start(store, prepared, idempotency_key)               record the run (status ``running``), once per key
    execute(store, prepared, run_id)                      send through the SDK, parse, record how it ended
    replay(...)                                           the three in a row (the CLI)

What is recorded and what is refused (decided here, documented in the README):

- Every attempt that reaches a provider is recorded, whatever happens: a reply (``ok``),
  an HTTP error, a 429 with its retry-after, a timeout, a refused connection, an answer
  that is not the documented shape (``malformed``). ``execute`` never raises.
- A conversation whose history holds a damaged record (TFROB-299) cannot be turned into a
  request: the seed's contract error is recorded as a run with status ``refused`` and an
  empty request body, so the reviewer sees why in the run list like any other outcome.
- A body that fails preflight (the SDK types, or a request-time rule of the provider for the
  model) is not sent either: the run is recorded as ``refused`` with the body and the first
  error finding, naming its rule. ``force=True`` sends it anyway, to reproduce the 400.
- Nothing is recorded when the request itself is wrong: an unknown provider, conversation
  or message id, a message to regenerate that is not an assistant's, or a provider whose key
  is not set (or is shorter than 8 characters). ``prepare`` raises (``UnknownNameError``,
  :class:`ProviderUnavailable`) with one clear line naming what to fix (for a missing key,
  the variable to set); nothing was attempted, so there is nothing to keep.

The key comes from the environment at send time (``core.replay.endpoints``); anything the
provider sends back is scrubbed of it before it is stored.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.errors import ContractError, MisuseError, UnknownNameError
from core.messages.assistant import AssistantTextMessage
from core.messages.union import MESSAGE_ADAPTER, Message
from core.preflight import Preflight, preflight
from core.providers import ChatLLM, default_provider, provider_named
from core.replay.endpoints import Endpoint, endpoint_for, unavailable_reason
from core.replay.parse import MalformedReply, ParsedReply, parse_reply
from core.replay.redact import Redactor
from core.replay.send import Exchange, Sender, send
from core.replay.sent_tools import GivenTools, SentTools, sent_tools, stored_request
from core.request_context.calls import request_turn
from core.store import NewRun, RunSummary, RunView, Store, TokenUsage

log = logging.getLogger("traceloupe.replay")

DEFAULT_TIMEOUT = 120.0
"""Seconds a provider has to answer before the run is recorded as a timeout."""


class ProviderUnavailable(MisuseError):
    """The provider cannot be reached from here: its key variable is not set (the message names it)."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A replay ready to send: the body, the endpoint, and the reply it regenerates (if any).

    ``refusal`` is set instead of a usable body when the history cannot become a request
    (a damaged record); ``start`` then records the run as refused.
    """

    conversation_id: str
    provider: str
    model: str
    upto: str | None
    body: dict[str, Any]
    endpoint: Endpoint
    original: Message | None
    refusal: str | None = None
    tools: SentTools = field(default_factory=SentTools)
    """The tools, tool choice and parameters the body carries, and where the tools came from."""


def expanded_history(messages: Sequence[Message]) -> list[Message]:
    """The conversation as ChatLLM reads it: each user message's trace placed around it."""
    return ChatLLM(default_provider()).construct_prompt_context(messages).messages


def default_upto(history: Sequence[Message]) -> str | None:
    """The msg_id of the final assistant reply (regenerating it is the default), or None when there is none."""
    for msg in reversed(history):
        if msg.role == "assistant":
            return msg.msg_id
    return None


def prepare(
    store: Store,
    conversation_id: str,
    provider: str,
    model: str,
    *,
    upto: str | None = None,
    environ: Mapping[str, str] | None = None,
    force: bool = False,
    tools: GivenTools | None = None,
    turn: str | None = None,
    infer_tools: bool = False,
    history: Sequence[Message] | None = None,
) -> Prepared:
    """Build the request for a replay; raises UnknownNameError or ProviderUnavailable (nothing is recorded).

    A body that fails preflight is prepared as refused unless ``force``. The body carries the stored request
    context of ``turn`` (a user msg_id; default the turn ``upto`` answers) with ``tools`` over it; with neither,
    ``infer_tools`` infers the tools from every recorded call of the conversation (``core.replay.sent_tools``).
    ``history``: the conversation's messages, when the caller has read them already (else they are read here).
    """
    dialect = provider_named(provider)  # UnknownNameError naming the known providers
    model = model.strip()
    if not model:
        raise MisuseError("a model name is needed (e.g. the provider's default)")
    endpoint = endpoint_for(dialect, environ)
    if endpoint is None:
        var = dialect.key_var
        env = os.environ if environ is None else environ
        if env.get(var, "").strip():
            raise ProviderUnavailable(f"{provider} is unavailable: {unavailable_reason(dialect, env)}")
        raise ProviderUnavailable(
            f"{provider} is unavailable: set {var} in the environment of the process that replays"
        )
    typed = list(store.get_conversation(conversation_id).typed if history is None else history)
    history = expanded_history(typed)
    if upto is None:
        upto = default_upto(history)
    original = next((m for m in history if m.msg_id == upto), None) if upto is not None else None
    if upto is not None and original is None:
        raise UnknownNameError(f"no message with msg_id {upto!r} in conversation {conversation_id!r}")
    if original is not None and original.role != "assistant":
        raise MisuseError(
            f"{upto!r} is a {original.role} message: only assistant messages can be regenerated "
            "(--upto names the reply to ask for again)"
        )
    turn = turn or request_turn(typed, upto)
    sending = sent_tools(stored_request(store, conversation_id, turn), tools, typed if infer_tools else None)
    try:
        result = ChatLLM(dialect, sending.options(model)).construct_request_params(typed, upto=upto)
    except ContractError as exc:
        refusal = f"the request cannot be built: a damaged record is in the history (TFROB-299): {exc}"
        return Prepared(conversation_id, provider, model, upto, {}, endpoint, original, refusal, sending)
    verdict = preflight(result)
    refused = None if force or verdict.accepted else preflight_refusal(verdict)
    return Prepared(conversation_id, provider, model, upto, result.body, endpoint, original, refused, sending)


def preflight_refusal(verdict: Preflight) -> str:
    """Why a body that fails preflight is not sent: its first error, naming the rule, and how many more."""
    first, *rest = verdict.errors
    where = f" (message {first.msg_id})" if first.msg_id else ""
    more = f"; and {len(rest)} more error(s)" if rest else ""
    return (
        f"not sent: preflight rule {first.rule} for {verdict.model}{where}: {first.detail} "
        f"[{first.authority}]{more}; `traceloupe replay --force` sends it anyway"
    )


def start(
    store: Store, prepared: Prepared, *, idempotency_key: str | None = None, started_by: str | None = None
) -> tuple[RunView, bool]:
    """Record the run as started (by the account ``started_by``); True when this call created it (only then may
    it be sent).

    A refused preparation is recorded and finished at once with status ``refused``.
    """
    run, created = store.claim_run(
        NewRun(
            prepared.conversation_id,
            provider=prepared.provider,
            model=prepared.model,
            request_body=prepared.body,
            up_to_msg_id=prepared.upto,
            idempotency_key=idempotency_key,
            started_by=started_by,
        )
    )
    if created and prepared.refusal is not None:
        run = store.finish_run(run.run_id, status="refused", error=prepared.refusal, request_body=prepared.body)
    return run, created


def execute(
    store: Store, prepared: Prepared, run_id: str, *, timeout: float = DEFAULT_TIMEOUT, sender: Sender = send
) -> RunView:
    """Send, parse and record how the run ended. Never raises for a provider's failure: it is the result.

    ``sender``: a queue's job passes one that holds the provider's concurrency slot and waits out 429s.
    """
    if prepared.refusal is not None:
        return store.get_run(run_id)
    try:
        exchange = sender(prepared.endpoint, prepared.model, prepared.body, timeout=timeout)
        outcome = _outcome(prepared, exchange, run_id)
    except Exception as exc:  # a bug here must still end the run, or it would show as running forever
        log.exception("replay %s failed inside Traceloupe", run_id)
        error = f"Traceloupe failed while replaying ({type(exc).__name__}); see the server log"
        outcome = _Outcome("error", error=error)
    return store.finish_run(
        run_id,
        status=outcome.status,
        response_body=outcome.response,
        error=outcome.error,
        usage=outcome.usage,
        reply=outcome.reply,
        request_body=prepared.body,
    )


def replay(
    store: Store,
    conversation_id: str,
    provider: str,
    model: str,
    *,
    upto: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    idempotency_key: str | None = None,
    environ: Mapping[str, str] | None = None,
    force: bool = False,
    tools: GivenTools | None = None,
) -> RunView:
    """Prepare, record and send one replay; the finished run (a repeated key returns the recorded run).

    ``force`` sends a body that fails preflight (for reproducing the provider's 400); ``tools`` overrides the
    stored tools or tool choice.
    """
    prepared = prepare(store, conversation_id, provider, model, upto=upto, environ=environ, force=force, tools=tools)
    run, created = start(store, prepared, idempotency_key=idempotency_key)
    if not created:
        return run
    return execute(store, prepared, run.run_id, timeout=timeout)


def reply_message(run: RunView | RunSummary) -> AssistantTextMessage | None:
    """A finished run's reply as the stored message type (through the one JSON door), or None.

    None too for a stored reply that does not read back (a database written by an older
    Traceloupe could hold one): the run's pages show it without a reply rather than failing.
    """
    if run.reply is None:
        return None
    try:
        message = MESSAGE_ADAPTER.validate_python(run.reply)
    except ValidationError:
        log.warning("run %s holds a reply that does not read back as a message", run.run_id)
        return None
    return message if isinstance(message, AssistantTextMessage) else None


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: Any
    response: dict[str, Any] | None = None
    error: str | None = None
    usage: TokenUsage | None = None
    reply: dict[str, Any] | None = None


STRUCTURAL_FIELDS = frozenset({"role", "msg_type", "type", "msg_id", "conversation_id"})
"""Fields of a stored reply that name its kind or place (set here, not by the provider): never redacted."""


def _outcome(prepared: Prepared, exchange: Exchange, run_id: str) -> _Outcome:
    """What to record for one exchange: the redacted response, and the parsed reply when it parses."""
    endpoint = prepared.endpoint
    redactor = Redactor(endpoint.key)
    response = redactor.json(exchange.response) if isinstance(exchange.response, dict) else None
    if response is None and exchange.response_text is not None:
        response = {"text": exchange.response_text}  # not JSON (or not an object): kept as text, redacted in send
    if exchange.status != "ok":
        return _Outcome(exchange.status, response, exchange.error)
    try:
        parsed, reply = read_reply(prepared, exchange, redactor, msg_id=f"run-{run_id}")
    except MalformedReply as exc:
        return _Outcome("malformed", response, f"the provider's answer could not be read: {exc}")
    usage = parsed.usage
    raw = _usage_raw(response)
    return _Outcome(
        "ok", response, None, TokenUsage(usage.input_tokens, usage.output_tokens, usage.total_tokens, raw), reply
    )


def read_reply(
    prepared: Prepared, exchange: Exchange, redactor: Redactor, *, msg_id: str
) -> tuple[ParsedReply, dict[str, Any]]:
    """The reply parsed from an answer, and as stored (redacted); MalformedReply when it cannot be read.

    The reply is read from the answer as received and redacted afterwards, value by value:
    redacting first could rewrite the very fields that say what each part is.
    """
    parsed = parse_reply(
        prepared.endpoint.wire,
        exchange.response,
        msg_id=msg_id,
        conversation_id=prepared.conversation_id,
        create_ts=int(time.time() * 1000),
    )
    return parsed, redacted_reply(parsed.message, redactor)


def redacted_reply(message: AssistantTextMessage, redactor: Redactor) -> dict[str, Any]:
    """The reply as stored: every provider-written string redacted, and proven to read back."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: v if k in STRUCTURAL_FIELDS else walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return redactor.text(value) if isinstance(value, str) else value

    stored: dict[str, Any] = walk(MESSAGE_ADAPTER.dump_python(message, mode="json"))
    try:
        MESSAGE_ADAPTER.validate_python(stored)
    except ValidationError as exc:
        count = exc.error_count()
        raise MalformedReply(f"the reply does not read back once the key is removed ({count} errors)") from None
    return stored


def _usage_raw(response: dict[str, Any] | None) -> dict[str, Any] | None:
    if response is None:
        return None
    raw = response.get("usage") or response.get("usageMetadata") or response.get("usage_metadata")
    return raw if isinstance(raw, dict) else None
