"""The ``judge`` comparison: a model of the user's choice asked whether two final answers are the same.

The request is built by ``ChatLLM`` for the judge's provider and model (the rubric as the system
message, the two answers in one user message), preflighted, sent by the replay's sender (the SDK,
the queue's concurrency slot and 429 waits) and read by the replay's parser; its tokens are priced
by the replay's price table. Nothing of it is recorded as a run: the verdict, the reasoning, the
tokens and the cost go into the comparison's detail and the cost into the run that asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import ContractError, MisuseError, UnknownNameError
from core.messages.union import MESSAGE_ADAPTER, Message
from core.preflight import preflight
from core.providers import ChatLLM, Dialect, RequestOptions, provider_named
from core.replay.answers import (
    RUBRIC,
    AnswerComparison,
    AnswerJudge,
    AnswerVerdict,
    JudgeFailed,
    plain_judge,
    read_judge_reply,
    similarity,
)
from core.replay.compare import text_diff
from core.replay.cost import cost_of, usage_of
from core.replay.endpoints import endpoint_for, unavailable_reason
from core.replay.parse import MalformedReply, parse_reply
from core.replay.redact import Redactor
from core.replay.send import Sender, send

REASONING_CHARS = 2000
"""A judge's reasoning is kept up to this many characters."""


def answer_judge(
    comparison: AnswerComparison,
    *,
    environ: Mapping[str, str] | None = None,
    sender: Sender = send,
    timeout: float = 120.0,
) -> AnswerJudge:
    """The function that judges two answers by ``comparison``; for a judge, MisuseError when it cannot be asked."""
    if comparison.kind != "judge":
        return plain_judge(comparison)
    check_judge(comparison, environ)
    return lambda recorded, replayed: ask_judge(comparison, recorded, replayed, environ, sender, timeout)


def check_judge(comparison: AnswerComparison, environ: Mapping[str, str] | None = None) -> None:
    """MisuseError (nothing recorded yet) for a judge whose provider is unknown or has no key here."""
    provider = _judge_provider(comparison)
    if endpoint_for(provider, environ) is None:
        raise MisuseError(f"judge: {provider.name} is unavailable: {unavailable_reason(provider, environ)}")


def _judge_provider(comparison: AnswerComparison) -> Dialect:
    try:
        return provider_named(comparison.provider or "")
    except UnknownNameError as exc:
        raise MisuseError(f"judge: {exc}") from None


def judge_request(provider: Dialect, model: str, recorded: str, replayed: str) -> dict[str, Any]:
    """The body the judge is sent: the rubric, then both answers (built and preflighted as a replay's)."""
    messages: list[Message] = [
        MESSAGE_ADAPTER.validate_python(
            {"role": "system", "content": RUBRIC, "msg_id": "judge-rubric", "conversation_id": "judge", "create_ts": 0}
        ),
        MESSAGE_ADAPTER.validate_python({
            "role": "user", "msg_type": "text", "msg_id": "judge-answers", "conversation_id": "judge", "create_ts": 0,
            "content": f"RECORDED:\n<<<\n{recorded}\n>>>\n\nREPLAYED:\n<<<\n{replayed}\n>>>",
        }),
    ]  # fmt: skip
    try:
        result = ChatLLM(provider, RequestOptions(model=model)).construct_request_params(messages)
    except ContractError as exc:  # pragma: no cover - two plain text messages always build
        raise JudgeFailed(f"the judge's request cannot be built: {exc}") from None
    verdict = preflight(result)
    if not verdict.accepted:
        first = verdict.errors[0]
        raise JudgeFailed(f"the judge's request fails preflight rule {first.rule}: {first.detail}")
    return result.body


def ask_judge(
    comparison: AnswerComparison,
    recorded: str,
    replayed: str,
    environ: Mapping[str, str] | None,
    sender: Sender,
    timeout: float,
) -> AnswerVerdict:
    """Send the two answers to the judge and read its verdict; JudgeFailed (with what it cost) when it gives none."""
    provider, model = _judge_provider(comparison), comparison.model or ""
    endpoint = endpoint_for(provider, environ)
    if endpoint is None:
        raise JudgeFailed(f"judge: {provider.name} is unavailable: {unavailable_reason(provider, environ)}")
    detail: dict[str, Any] = {
        "comparison": str(comparison), **text_diff(recorded, replayed), "similarity": similarity(recorded, replayed),
        "score": None,
    }  # fmt: skip
    body = judge_request(provider, model, recorded, replayed)
    exchange = sender(endpoint, model, body, timeout=timeout)
    redactor = Redactor(endpoint.key)
    usage = usage_of(endpoint.wire, exchange.response)
    price = cost_of(provider, model, usage)
    judged: dict[str, Any] = {"provider": provider.name, "model": model, "tokens": {"input": usage.input,
                              "output": usage.output}, "cost_usd": price.usd, "cost_note": price.note}  # fmt: skip
    if exchange.status != "ok":
        error = redactor.text(exchange.error or exchange.status)
        raise JudgeFailed(f"the judge failed: {error}", {**detail, "judge": judged})
    try:
        parsed = parse_reply(endpoint.wire, exchange.response, msg_id="judge", conversation_id="judge",
                             create_ts=0)  # fmt: skip
        text = parsed.message.content if isinstance(parsed.message.content, str) else ""
        same, reasoning = read_judge_reply(text)
    except (MalformedReply, ValueError) as exc:
        raise JudgeFailed(f"the judge's answer is not a verdict: {exc}", {**detail, "judge": judged}) from None
    judged.update(verdict="same" if same else "different", reasoning=redactor.text(reasoning)[:REASONING_CHARS])
    return AnswerVerdict(same, {**detail, "judge": judged})
