"""Provider payloads for the dashboard: build a request with the adapters, or say why it cannot be built.

``build`` runs ``ChatLLM.construct_request_params`` over a stored conversation for
one dialect, with the settings' attachments root. A damaged record makes the
pipeline raise the seed's ContractError; that is an answer here, not a failure:
the result carries the error, the record and how to see the repaired payload
(``repair=True`` re-types damaged records with ``core.integrity.repair`` first,
never inventing dropped data). Built requests are cached per conversation
version, so the payload page, its phases fragment, the diff and the API share one
build. Each build carries its capability report: what the provider and model cannot
carry, and the preflight verdict (SDK types and the provider's request-time rules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from litestar.exceptions import HTTPException

from core import ContractError, Message
from core.integrity import CONTRACT_ERROR_TYPE, repair
from core.preflight import CapabilityReport, Finding, capability_report
from core.providers import ChatLLM, RequestOptions, RequestResult, dialect_names, provider_named
from core.request_context import StoredRequest, to_options
from core.request_context.calls import applying, request_turn
from web.backlog import Backlog
from web.bodies.preparations import Preparations
from web.bodies.tools import tool_anchors
from web.lru import LruCache
from web.request_options import AskedOptions
from web.source import Loaded, version_of
from web.timeline.order import flatten, msg_anchor

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Damaged:
    """Why a request could not be built: the first damaged record the pipeline met, in the seed's words."""

    msg_id: str
    role: str
    error_type: str
    message: str
    anchor: str


@dataclass(frozen=True, slots=True)
class FindingView:
    """A preflight finding with the anchor of the card of the message it came from."""

    finding: Finding
    anchor: str | None


@dataclass(frozen=True, slots=True)
class Built:
    """One dialect's request for one conversation: the result, or the contract error that stopped it."""

    provider: str
    upto: str | None
    repaired: bool
    result: RequestResult | None
    damaged: Damaged | None
    healed: tuple[str, ...] = ()
    """msg_ids re-typed by the repair (empty unless ``repaired``)."""
    report: CapabilityReport | None = None
    """What the provider and model cannot carry, and the preflight verdict (None when not built)."""
    key: tuple[object, ...] = ()
    """The build's cache key (conversation, version, provider, upto, repair, model): what derived views key on."""
    size: int = 0
    """The conversation's messages and records: what the caches weigh this build and its derived views by."""

    @property
    def findings(self) -> list[FindingView]:
        """The preflight findings, each with its card's anchor."""
        if self.report is None:
            return []
        return [FindingView(f, msg_anchor(f.msg_id) if f.msg_id else None) for f in self.report.verdict.findings]

    @property
    def anchors(self) -> dict[str, str]:
        """JSON pointer -> the anchor of the card that became that node (the provenance map, inverted)."""
        if self.result is None:
            return {}
        return {pointer: msg_anchor(msg_id) for msg_id, ptrs in self.result.provenance.items() for pointer in ptrs}

    @property
    def marked(self) -> dict[str, str]:
        """JSON pointer -> what its node links to: the cards' anchors and the tools section's (web.bodies.tools)."""
        if self.result is None:
            return {}
        return {**self.anchors, **tool_anchors(self.result.body)}


def check_provider(name: str) -> str:
    """The dialect name, or UnknownNameError listing the known ones (a 404)."""
    provider_named(name)
    return name


def providers() -> list[str]:
    """Every dialect the adapters know, in a stable order."""
    return dialect_names()


def _repaired(messages: Sequence[Message]) -> tuple[list[Message], tuple[str, ...]]:
    out: list[Message] = []
    healed: list[str] = []
    for message in messages:
        fixed = repair(message)
        out.append(fixed.message)
        healed.extend(d.msg_id for d in fixed.healed)
    return out, tuple(healed)


class PayloadBuilder:
    """Builds requests with one set of options (the attachments root) and keeps the recent ones.

    Builds are kept up to ``max_records`` conversation messages and records in all (their views derived
    from them, up to twice that), least recently used out first. Weighing by records rather than counting
    builds keeps a long trace's build while readers open many small conversations, and bounds the memory
    that a few long traces hold.
    """

    def __init__(
        self,
        attachments_root: Path | None,
        max_records: int = 100_000,
        max_items: int = 256,
        *,
        backlog: Backlog | None = None,
        preparations: Preparations | None = None,
    ) -> None:
        self.options = RequestOptions(attachments_root=attachments_root)
        self.backlog = backlog
        """Where a page leaves the rest of a digest it started, to be made from the build it holds (None: nowhere)."""
        self.preparations = preparations
        """Where a long trace's page digests are made before its pages open (None: on the request, as for all)."""
        self._built: LruCache[tuple[object, ...], Built] = LruCache(
            max_items, weight=lambda built: built.size, max_weight=max_records
        )
        # A few views per build (window plans, a diff, the reply choices): twice the room.
        self._derived: LruCache[tuple[object, ...], Any] = LruCache(2 * max_items, max_weight=2 * max_records)

    def derived(self, key: tuple[object, ...], make: Callable[[], T], weight: int = 1) -> T:
        """What ``make`` computes from built requests (a window plan, a diff), kept beside the recent builds.

        ``key`` must name the builds it reads (their ``Built.key``), so a new version of the conversation
        is a new key; each window of a large body then reuses one plan instead of redoing it. ``weight``
        is what the value holds in the builds' unit (their ``size``, for a view of a whole body).
        """
        return self._derived.get_or_make(key, make, weight)  # type: ignore[no-any-return]

    def build(
        self,
        loaded: Loaded,
        provider: str,
        *,
        upto: str | None = None,
        repair: bool = False,
        model: str | None = None,
        asked: AskedOptions | None = None,
    ) -> Built:
        """The request ``provider`` would receive for ``model`` (default: the dialect's), the one that produced
        ``upto`` when given, with the options ``asked`` over the recorded request (applied ones only)."""
        check_provider(provider)
        model = model or None
        asked = asked if asked is not None and asked.applied else None
        key: tuple[object, ...] = (
            loaded.summary.conversation_id, version_of(loaded.summary), provider, upto or None, repair, model,
        )  # fmt: skip
        if asked is not None:  # a plain build's key stays as it was: its digests and views are not these
            key = (*key, asked.key)
        return self._built.get_or_make(
            key,
            lambda: replace(
                self._build(loaded.messages, provider, upto or None, repair, model, loaded.contexts, asked),
                key=key,
                size=loaded.size,
            ),
        )

    def _build(
        self,
        messages: Sequence[Message],
        provider: str,
        upto: str | None,
        repair: bool,
        model: str | None,
        contexts: Sequence[StoredRequest] = (),
        asked: AskedOptions | None = None,
    ) -> Built:
        healed: tuple[str, ...] = ()
        if repair:
            messages, healed = _repaired(messages)
        options = replace(self.options, model=model)
        if asked is not None:  # given over stored, as the CLI's flags are
            options = asked.over(options)
        # The tools, tool choice and parameters the agent stored for the request's turn, as a replay sends them.
        stored = applying(contexts, messages[0].conversation_id, request_turn(messages, upto)) if contexts else None
        options = to_options(stored, options, provider) if stored is not None else options
        if asked is not None:
            options = asked.tools_over(options)
        llm = ChatLLM(provider_named(provider), options)
        try:
            result = llm.construct_request_params(messages, upto=upto)
        except ContractError as exc:
            damaged = Damaged(
                msg_id=exc.msg_id,
                role=exc.role,
                error_type=CONTRACT_ERROR_TYPE,
                message=str(exc),
                anchor=msg_anchor(exc.msg_id),
            )
            return Built(provider, upto, repair, None, damaged, healed)
        return Built(provider, upto, repair, result, None, healed, capability_report(result))


Choices = tuple[list[tuple[str, str]], int]
"""The assistant replies a request can be cut before, (msg_id, label) each, and how many there are in all."""


def assistant_choices(loaded: Loaded, limit: int = 1000) -> Choices:
    """The assistant replies a request can be cut before (``upto``): (msg_id, label), and how many there are.

    Read from the timeline's slots, so only the ``limit`` listed replies are typed (for their labels), or
    taken from the typed messages when a page has made them (the slots are their flattened order).
    """
    timeline = loaded.timeline
    top = {slot.msg_id for slot in timeline.slots if slot.placement == "message"}
    positions = [
        position
        for position, slot in enumerate(timeline.slots)
        if slot.role == "assistant" and not slot.depth and (slot.parent_id is None or slot.parent_id in top)
    ]
    listed = positions[:limit]
    if loaded.typed:  # the payload page typed every message already: take them rather than read records again
        entries = flatten(loaded.messages)
        replies = [entries[position].message for position in listed]
    else:
        replies = timeline.messages_at(listed)
    choices: list[tuple[str, str]] = []
    for msg in replies:
        text = " ".join(str(msg.content if isinstance(msg.content, str) else "").split())
        calls = ", ".join(c.name for c in msg.tool_calls or ())
        label = text[:60] or (f"calls {calls}"[:60] if calls else "(no text)")
        choices.append((msg.msg_id, label))
    return choices, len(positions)


def usable_result(built: Built) -> Any:
    """The built request, or a 422 naming the damaged record that stopped it (the API's answer)."""
    if built.damaged is not None or built.result is None:
        raise HTTPException(status_code=422, detail=f"{built.damaged.message if built.damaged else 'no request'}")
    return built.result
