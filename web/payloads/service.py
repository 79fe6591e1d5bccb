"""One provider's request for a stored conversation, as the payload page, the diff page and the API ask for it."""

from __future__ import annotations

from typing import Annotated

from litestar.params import QueryParameter

from core.providers import get_dialect
from web import masking
from web.heavy import export_then
from web.payloads.builder import MODEL_CHOICES, Built, PayloadBuilder, assistant_choices, check_provider, providers
from web.payloads.pages import RequestChoice
from web.source import Loaded, StoreSource

MsgId = Annotated[str | None, QueryParameter(max_length=300)]


ModelName = Annotated[str | None, QueryParameter(max_length=200)]


def request_choice(
    loaded: Loaded, provider: str, upto: str | None, repair: bool, model: str | None = None
) -> RequestChoice:
    """The request asked for, with the alternatives the page offers (providers, assistant replies, models)."""
    listed, total = assistant_choices(loaded)
    choices = [(msg_id, masking.mask(label)) for msg_id, label in listed]
    return RequestChoice(
        conversation_id=loaded.summary.conversation_id,
        provider=provider,
        upto=upto or None,
        repair=repair,
        providers=providers(),
        choices=choices,
        choices_total=total,
        model=model or None,
        default_model=get_dialect(provider).default_model,
        models=MODEL_CHOICES.get(provider, ()),
    )


def load_and_build(
    source: StoreSource,
    payloads: PayloadBuilder,
    conversation_id: str,
    provider: str,
    upto: str | None,
    repair: bool,
    model: str | None = None,
) -> tuple[Loaded, Built]:
    """The conversation and one provider's request for it (404 for an unknown provider, conversation or upto)."""
    check_provider(provider)
    loaded = source.load(conversation_id)
    return loaded, payloads.build(loaded, provider, upto=upto or None, repair=repair, model=model)


def payload_command(
    conversation_id: str, provider: str, upto: str | None, *, phases: bool = False, model: str | None = None
) -> str:
    """The CLI command that builds the same request (or its phases) without the dashboard's time budget."""
    return export_then(
        conversation_id,
        *("traceloupe", "payload", "-", "--conversation", conversation_id, "--provider", provider),
        *(("--upto", upto) if upto else ()),
        *(("--model", model) if model else ()),
        "--phases" if phases else None,
    )
