"""One provider's request for a stored conversation, as the payload page, the diff page and the API ask for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from litestar import Request
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromQuery, QueryParameter, SkipValidation

from core.providers import provider_named
from core.request_context import StoredRequest
from core.request_context.calls import applying
from core.store.digests import part_numbers
from web import masking, urls
from web.bodies.asked import RequestChoice
from web.bodies.builder import (
    Built,
    Choices,
    PayloadBuilder,
    assistant_choices,
    check_provider,
    providers,
    usable_result,
)
from web.bodies.digest import (
    PayloadDigest,
    StoredParts,
    make_payload_digest,
    payload_asked,
    payload_parts,
    read_payload_digest,
    window_part,
)
from web.bodies.jsonview import Mark, Rendered
from web.bodies.windows import WINDOW_BYTES, Layout, plan
from web.digest_key import DigestKey, key_for
from web.heavy import export_then
from web.request_options import (
    NAMES as OPTION_NAMES,
)
from web.request_options import (
    AskedOptions,
    ModelLimit,
    OptionsForm,
    model_limit,
    options_form,
    read_options,
)
from web.source import Loaded, StoreSource, version_of

MsgId = Annotated[str | None, QueryParameter(max_length=300)]


ModelName = Annotated[str | None, QueryParameter(max_length=200)]

MAX_CHOICES = 250
"""Replies the request selector lists; every assistant card links to its own request."""


@dataclass(frozen=True, slots=True)
class AskedRequest:
    """What a payload route is asked for, decoded: the conversation, the provider, the cut, repair and the model."""

    conversation_id: str
    provider: str
    upto: str | None
    repair: bool
    model: str | None
    options: AskedOptions = field(default_factory=AskedOptions)
    """The request options asked for over the recorded request (``web.request_options``)."""

    @property
    def what(self) -> str:
        """The request as a message names it."""
        return f"the {self.provider} request"

    def build(self, source: StoreSource, payloads: PayloadBuilder) -> tuple[Loaded, Built]:
        return load_and_build(
            source, payloads, self.conversation_id, self.provider, self.upto, self.repair, self.model, self.options
        )

    def choice(
        self, loaded: Loaded, payloads: PayloadBuilder | None = None, listed: Choices | None = None
    ) -> RequestChoice:
        choice = request_choice(loaded, self.provider, self.upto, self.repair, self.model, payloads, listed)
        return replace(choice, options=self.options.texts)

    def options_form(self, loaded: Loaded) -> OptionsForm:
        """The options form of the page: the fields asked, the recorded request's values, the model's limit."""
        stored = recorded_request(loaded, self.upto)
        limits = (model_limit(self.provider, self.model),)
        return options_form(self.options, stored.params if stored is not None else None, limits)

    def command(self, *, phases: bool = False) -> str:
        return payload_command(
            self.conversation_id, self.provider, self.upto, phases=phases, model=self.model, options=self.options
        )


def asked_request(
    request: Request[Any, Any, Any],
    conversation_id: urls.PathId,
    provider: urls.PathId,
    upto: MsgId = None,
    repair: FromQuery[bool] = False,
    model: ModelName = None,
) -> AskedRequest:
    """The payload routes' shared parameters as one value (a dependency: each route declares them once here).

    The request options are read from the query through their one spec (``web.request_options``), each checked
    against the model's limits; a refused one is said beside its field, and the body is built without them."""
    provider = urls.from_segment(provider)
    options = asked_options(request, lambda: (model_limit(check_provider(provider), model),))
    return AskedRequest(urls.from_segment(conversation_id), provider, upto or None, repair, model, options)


def asked_options(request: Request[Any, Any, Any], limits: Callable[[], Sequence[ModelLimit]]) -> AskedOptions:
    """The request options of a page's query (none read when the query names none: a plain page reads no table)."""
    query = request.query_params
    if not any(query.get(name) for name in OPTION_NAMES):
        return AskedOptions()
    return read_options(query.get, limits())


def recorded_request(loaded: Loaded, upto: str | None) -> StoredRequest | None:
    """The request context stored for the turn the request is built in (as ``core.request_context.calls``
    ``request_turn`` finds it), read from the timeline's slots so no message is typed for it."""
    contexts = loaded.contexts
    if not contexts:
        return None
    turn: str | None = None
    for slot in loaded.timeline.slots:
        if slot.msg_id == upto and slot.depth == 0:
            turn = slot.parent_id if slot.parent_id is not None else turn
            break
        if slot.parent_id is None and slot.placement == "message" and slot.role == "user":
            turn = slot.msg_id
    return applying(contexts, loaded.summary.conversation_id, turn)


AskedDep = NamedDependency[SkipValidation[AskedRequest]]


def request_choice(
    loaded: Loaded,
    provider: str,
    upto: str | None,
    repair: bool,
    model: str | None = None,
    payloads: PayloadBuilder | None = None,
    listed: Choices | None = None,
) -> RequestChoice:
    """The request asked for, with the alternatives the page offers (providers, assistant replies, models).

    The replies are ``listed`` (as a digest keeps them), or found: kept per conversation version with ``payloads``.
    """
    replies, total = listed if listed is not None else reply_choices(loaded, payloads)
    dialect = provider_named(provider)
    choices = [(msg_id, masking.mask(label)) for msg_id, label in replies]
    return RequestChoice(
        conversation_id=loaded.summary.conversation_id,
        provider=provider,
        upto=upto or None,
        repair=repair,
        providers=providers(),
        choices=choices,
        choices_total=total,
        model=model or None,
        default_model=dialect.default_model,
        models=dialect.suggested_models,
    )


def reply_choices(loaded: Loaded, payloads: PayloadBuilder | None = None) -> Choices:
    """The replies the request selector lists; with ``payloads``, kept per conversation version (finding them
    walks every message and types the listed replies)."""
    if payloads is None:
        return assistant_choices(loaded, MAX_CHOICES)
    summary = loaded.summary
    key = ("choices", summary.conversation_id, version_of(summary))
    return payloads.derived(key, lambda: assistant_choices(loaded, MAX_CHOICES))


def load_and_build(
    source: StoreSource,
    payloads: PayloadBuilder,
    conversation_id: str,
    provider: str,
    upto: str | None,
    repair: bool,
    model: str | None = None,
    options: AskedOptions | None = None,
) -> tuple[Loaded, Built]:
    """The conversation and one provider's request for it (404 for an unknown provider, conversation or upto)."""
    check_provider(provider)
    loaded = source.load(conversation_id)
    return loaded, payloads.build(loaded, provider, upto=upto or None, repair=repair, model=model, asked=options)


def payload_command(
    conversation_id: str,
    provider: str,
    upto: str | None,
    *,
    phases: bool = False,
    model: str | None = None,
    options: AskedOptions | None = None,
) -> str:
    """The CLI command that builds the same request (or its phases) without the dashboard's time budget."""
    return export_then(
        conversation_id,
        *("traceloupe", "payload", "-", "--conversation", conversation_id, "--provider", provider),
        *(("--upto", upto) if upto else ()),
        *(("--model", model) if model else ()),
        *(options.cli_args() if options is not None else ()),
        "--phases" if phases else None,
    )


@dataclass(frozen=True, slots=True)
class BodyView:
    """A built body ready to show by windows: its plan and the marks linking its nodes to their cards."""

    layout: Layout
    marks: dict[str, Mark]
    anchors: dict[str, str]
    """JSON pointer -> card anchor (the provenance map, inverted)."""


def body_view(payloads: PayloadBuilder, built: Built, budget: int = WINDOW_BYTES) -> BodyView:
    """The window plan of a built body (windows of about ``budget`` bytes), planned once per build and kept."""
    result = usable_result(built)

    def make() -> BodyView:
        marks = {p: Mark(card=a) for p, a in built.marked.items()}
        return BodyView(plan(result.body, budget), marks, built.anchors)

    return payloads.derived(("body", budget, *built.key), make, built.size)


def window_of(layout: Layout, n: int) -> int:
    """``n`` when the body has such a window; 404 otherwise."""
    if not 0 <= n < layout.count:
        raise NotFoundException(f"This body has {layout.count} windows (0 to {layout.count - 1}).")
    return n


def body_chunks(layout: Layout, marks: Mapping[str, Mark]) -> Iterator[bytes]:
    """The whole body pretty-printed, as the page shows it, one window at a time (secrets masked)."""
    for n in range(layout.count):
        yield "".join(token.text for token in layout.render(n, marks).tokens).encode("utf-8")


def digest_key(source: StoreSource, conversation_id: str, kind: str, asked: tuple[object, ...]) -> DigestKey:
    """``key_for`` the conversation as stored now; 404 naming the conversation when there is none."""
    key = key_for(source.store, conversation_id, kind, asked)
    if key is None:
        source.summary(conversation_id)  # the 404 naming the conversation
        raise NotFoundException(f"No conversation with id {conversation_id!r}.")
    return key


def payload_digest(
    source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest, *, every_window: bool = False
) -> PayloadDigest:
    """The digest of the request asked for: read from the store, or built, stored and returned (404 when unknown).

    ``every_window``: make sure the stored digest holds every window (the background job's way).
    """
    check_provider(asked.provider)
    if asked.options.applied:
        return unstored_payload_digest(source, payloads, asked)
    store = source.store
    asked_for = payload_asked(payloads, asked.provider, asked.upto, asked.repair, asked.model)
    key = digest_key(source, asked.conversation_id, "payload", asked_for)
    hit = read_payload_digest(store, key)
    if hit is None:
        loaded, built = asked.build(source, payloads)
        hit = make_payload_digest(store, payloads, key, built, reply_choices(loaded, payloads))
        if not every_window:
            if not hit.head.whole_on_first_page:
                _complete_later(source, payloads, asked)
            return hit
        hit = read_payload_digest(store, key) or hit  # the windows below written as they are made, not kept
    if every_window and hit.head.plan is not None:
        held = part_numbers(store.engine, key.key, "w")
        for n in range(hit.head.plan.count):
            if n not in held:
                digest_window(source, payloads, asked, hit, n)
    return hit


def digest_window(
    source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest, digest: PayloadDigest, n: int
) -> Rendered:
    """Window ``n`` of a digest's body, made from the build and stored when it holds it not yet; 404 past the end."""
    plan = digest.head.plan
    count = plan.count if plan is not None else 0
    if not 0 <= n < count:
        raise NotFoundException(f"This body has {count} windows (0 to {count - 1}).")
    found = digest.window(n)
    if found is not None:
        return found
    _, built = asked.build(source, payloads)
    window = digest.add_window(n, window_part(payloads, built, n))
    _complete_later(source, payloads, asked)
    return window


def unstored_payload_digest(source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest) -> PayloadDigest:
    """A digest of a build with request options, made on the request and never stored: a query's options are
    anyone's choice, so they must not add rows to the store, and the plain page's digest stays the plain build's.
    Kept with the build (``PayloadBuilder.derived``), its windows rendered as they are asked for."""
    loaded, built = asked.build(source, payloads)
    choices = reply_choices(loaded, payloads)

    def make() -> PayloadDigest:
        head, parts = payload_parts(payloads, built, choices)
        return PayloadDigest(head, StoredParts.unstored(parts))

    return payloads.derived(("unstored-digest", *built.key), make)


def _complete_later(source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest) -> None:
    """The rest of the digest made after the response, while the build just made is still held (``web.backlog``)."""
    if asked.options.applied:
        return  # an options build has no stored digest to complete
    if payloads.backlog is not None:
        payloads.backlog.submit(("payload", asked), lambda: payload_digest(source, payloads, asked, every_window=True))
