"""Two providers' requests for one conversation, as the diff page and the API compare them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from litestar import Request
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromQuery, QueryParameter, SkipValidation

from core.providers.dialects import DEFAULT_PAIR as PROVIDERS_COMPARED
from core.store import Store
from core.store.digests import part_numbers
from web import urls
from web.bodies.asked import DiffLinks
from web.bodies.builder import Built, PayloadBuilder, check_provider, usable_result
from web.bodies.compare import LISTED, Comparison, Listing, compare
from web.bodies.diff_digest import (
    SIDE_PARTS,
    DiffDigest,
    chunk_count,
    diff_asked,
    diff_parts,
    listing_chunk,
    listing_of,
    make_diff_digest,
    read_diff_digest,
)
from web.bodies.digest import StoredParts, write_missing_parts
from web.bodies.facts import encode_rendered
from web.bodies.jsonview import Rendered
from web.bodies.requests import MsgId, asked_options, body_view, digest_key, recorded_request, reply_choices
from web.bodies.windows import PANE_WINDOW_BYTES
from web.heavy import export_then
from web.request_options import AskedOptions, OptionsForm, model_limit, options_form
from web.source import Loaded, StoreSource

Provider = Annotated[str, QueryParameter(max_length=40)]


def build_both(
    source: StoreSource,
    payloads: PayloadBuilder,
    conversation_id: str,
    left: str,
    right: str,
    upto: str | None,
    repair: bool,
    options: AskedOptions | None = None,
) -> tuple[Loaded, Built, Built]:
    """The conversation and both providers' requests (404 for an unknown provider, conversation or upto)."""
    check_provider(left)
    check_provider(right)
    loaded = source.load(conversation_id)
    return (
        loaded,
        payloads.build(loaded, left, upto=upto or None, repair=repair, asked=options),
        payloads.build(loaded, right, upto=upto or None, repair=repair, asked=options),
    )


def diff_command(
    conversation_id: str,
    left: str,
    right: str,
    upto: str | None,
    attachments_root: Path | None = None,
    options: AskedOptions | None = None,
) -> str:
    """The CLI command that diffs the same two requests without the dashboard's time budget (and reads the
    attachments the server reads, so it counts the same warnings)."""
    return export_then(
        conversation_id,
        *("traceloupe", "diff", "-", "--conversation", conversation_id, "--left", left, "--right", right),
        *(("--upto", upto) if upto else ()),
        *(("--attachments-root", str(attachments_root)) if attachments_root is not None else ()),
        *(options.cli_args() if options is not None else ()),
    )


def comparison_of(payloads: PayloadBuilder, left: Built, right: Built) -> Comparison:
    """The diff of two built requests with each pane's marks, computed once per pair of builds."""
    lresult, rresult = usable_result(left), usable_result(right)
    return payloads.derived(
        ("diff", left.key, right.key),
        lambda: compare(lresult, rresult, left.marked, right.marked),
        left.size + right.size,
    )


def side_of(side: str) -> str:
    """``left`` or ``right``; 404 otherwise."""
    if side not in SIDES:
        raise NotFoundException("side is 'left' or 'right'.")
    return side


SIDES = ("left", "right")

DEFAULT_PAIR = PROVIDERS_COMPARED
"""The diff a conversation's links open when no pair is asked for."""


def asked_diff(
    request: Request[Any, Any, Any],
    conversation_id: urls.PathId,
    left: Provider = DEFAULT_PAIR[0],
    right: Provider = DEFAULT_PAIR[1],
    upto: MsgId = None,
    repair: FromQuery[bool] = False,
) -> DiffLinks:
    """The diff page routes' shared parameters as one value (a dependency: each route declares them once here);
    the request options, max tokens checked against both sides' models (``web.request_options``)."""
    options = asked_options(
        request, lambda: (model_limit(check_provider(left), None), model_limit(check_provider(right), None))
    )
    return DiffLinks(urls.from_segment(conversation_id), left, right, upto or None, repair, options)


AskedDiffDep = NamedDependency[SkipValidation[DiffLinks]]


def build_asked(source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks) -> tuple[Loaded, Built, Built]:
    """``build_both`` for the diff the page was asked for."""
    return build_both(
        source, payloads, asked.conversation_id, asked.left, asked.right, asked.upto, asked.repair, asked.options
    )


def asked_command(asked: DiffLinks, payloads: PayloadBuilder) -> str:
    """``diff_command`` for the diff the page was asked for, with the server's attachments root."""
    root = payloads.options.attachments_root
    return diff_command(asked.conversation_id, asked.left, asked.right, asked.upto, root, asked.options)


def diff_options_form(asked: DiffLinks, loaded: Loaded) -> OptionsForm:
    """The diff page's options form: the recorded request's values, both sides' models' limits."""
    stored = recorded_request(loaded, asked.upto)
    limits = (model_limit(asked.left, None), model_limit(asked.right, None))
    return options_form(asked.options, stored.params if stored is not None else None, limits)


def diff_digest(
    source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks, *, every_window: bool = False
) -> DiffDigest:
    """The digest of the diff asked for: read from the store, or built, stored and returned (404 when unknown).

    ``every_window``: make sure the stored digest holds every window of both panes (the background job's way).
    """
    check_provider(asked.left)
    check_provider(asked.right)
    if asked.options.applied:
        return unstored_diff_digest(source, payloads, asked)
    store = source.store
    asked_for = diff_asked(payloads, asked.left, asked.right, asked.upto, asked.repair)
    key = digest_key(source, asked.conversation_id, "diff", asked_for)
    hit = read_diff_digest(store, key)
    if hit is None:
        loaded, lbuilt, rbuilt = build_asked(source, payloads, asked)
        made = make_diff_digest(store, payloads, key, lbuilt, rbuilt, choices=reply_choices(loaded, payloads))
        if not every_window:
            if not made.head.whole_on_first_page:
                _complete_later(source, payloads, asked)
            return made
        _fill(store, key.key, payloads, lbuilt, rbuilt)
        return made
    if every_window and not _holds_every_part(hit, store, key.key):
        _, lbuilt, rbuilt = build_asked(source, payloads, asked)
        _fill(store, key.key, payloads, lbuilt, rbuilt)
    return hit


def unstored_diff_digest(source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks) -> DiffDigest:
    """The diff of two builds with request options, made on the request and never stored (as
    ``web.bodies.requests.unstored_payload_digest``), kept with the builds."""
    _, lbuilt, rbuilt = build_asked(source, payloads, asked)

    def make() -> DiffDigest:
        head, parts = diff_parts(payloads, lbuilt, rbuilt)
        return DiffDigest(head, StoredParts.unstored(parts))

    return payloads.derived(("unstored-diff-digest", lbuilt.key, rbuilt.key), make)


def _fill(store: Store, key: str, payloads: PayloadBuilder, lbuilt: Built, rbuilt: Built) -> None:
    """Write every part the digest lacks, each as it is made; the parts it holds (a fill stopped half way, resumed
    after a restart) are not made again."""
    held: dict[str, set[int]] = {}

    def holds(name: str, n: int) -> bool:
        if name not in held:
            held[name] = part_numbers(store.engine, key, name)
        return n in held[name]

    write_missing_parts(StoredParts(key, store), diff_parts(payloads, lbuilt, rbuilt, every_window=True, held=holds)[1])


def _holds_every_part(digest: DiffDigest, store: Store, key: str) -> bool:
    for group in digest.head.groups:
        if len(part_numbers(store.engine, key, f"c:{group.cause}")) < chunk_count(group):
            return False
    for side in SIDES:
        plan = digest.head.plan(side)
        if plan is not None and len(part_numbers(store.engine, key, SIDE_PARTS[side])) < plan.count:
            return False
    return True


def diff_window(
    source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks, digest: DiffDigest, side: str, n: int
) -> Rendered:
    """Window ``n`` of one side, made from the builds and stored when the digest holds it not yet; 404 past the end."""
    plan = digest.head.plan(side)
    count = plan.count if plan is not None else 0
    if not 0 <= n < count:
        raise NotFoundException(f"This body has {count} windows (0 to {count - 1}).")
    found = digest.window(side, n)
    if found is not None:
        return found
    _, lbuilt, rbuilt = build_asked(source, payloads, asked)
    comparison = comparison_of(payloads, lbuilt, rbuilt)
    built, marks = (lbuilt, comparison.left_marks) if side == "left" else (rbuilt, comparison.right_marks)
    layout = body_view(payloads, built, PANE_WINDOW_BYTES).layout
    window = digest.add_window(side, n, encode_rendered(layout.render(n, marks)))
    _complete_later(source, payloads, asked)
    return window


def diff_listing(
    source: StoreSource,
    payloads: PayloadBuilder,
    asked: DiffLinks,
    digest: DiffDigest,
    cause: str,
    offset: int,
    *,
    every: bool = False,
) -> Listing | None:
    """The changes of ``cause`` from ``offset``, the listings missing from the digest made from the builds and
    stored (``every``: all of the cause's); None for a cause without a group."""
    group = digest.head.group(cause)
    if group is None or digest.head.left_plan is None:
        return None
    k = offset // LISTED
    wanted = range(0, chunk_count(group)) if every else range(k, min(k + 2, chunk_count(group)))
    held = digest.chunks(cause, wanted.start, wanted.stop)
    missing = [i for i in wanted if i not in held]
    if missing:
        _, lbuilt, rbuilt = build_asked(source, payloads, asked)
        comparison = comparison_of(payloads, lbuilt, rbuilt)
        left = body_view(payloads, lbuilt, PANE_WINDOW_BYTES).layout
        right = body_view(payloads, rbuilt, PANE_WINDOW_BYTES).layout
        for i in missing:
            held[i] = listing_chunk(comparison, cause, i, left, right)
            digest.add_chunk(cause, i, held[i])
        _complete_later(source, payloads, asked)
    items = [item for i in range(k, k + 2) for item in held.get(i, [])][offset - k * LISTED :][:LISTED]
    return listing_of(group, offset, items)


def _complete_later(source: StoreSource, payloads: PayloadBuilder, asked: DiffLinks) -> None:
    """The rest of the digest made after the response, while the builds just made are still held (``web.backlog``)."""
    if asked.options.applied:
        return  # an options diff has no stored digest to complete
    if payloads.backlog is not None:
        payloads.backlog.submit(("diff", asked), lambda: diff_digest(source, payloads, asked, every_window=True))
