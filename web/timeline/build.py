"""Turn one timeline entry into one typed card: the only place that knows every message kind.

Dispatch over the closed set of message classes ends in ``assert_never`` on the
role, so a new role fails the type checker here. A damaged record (a bare
BaseMessage with role user or assistant) gets the card kind its repair would give
it, built only from the fields that survived, and carries its Damage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, assert_never, cast

from core import (
    MESSAGE_TAGS,
    AssistantTextMessage,
    AttachmentMessage,
    AudioMessage,
    BaseMessage,
    BaseUser,
    ConsoleResult,
    ContactMessage,
    FunctionCall,
    HistoryMessage,
    ImageMessage,
    Message,
    MsgPart,
    MultiPartMessage,
    TextMessage,
    TextPart,
    ThinkingBlock,
    ToolCall,
    UrlMessage,
    VideoMessage,
)
from core.formats.records import incomplete_reason
from core.integrity import Damage
from core.messages.convert import text_of
from core.providers.jsonable import pointer_token
from web.masking import safe_cut
from web.timeline.cards import (
    AssistantBody,
    Card,
    CardBody,
    CardKind,
    ConsoleView,
    ContactBody,
    FieldText,
    FunctionBody,
    HistoryBody,
    MediaBody,
    PartsBody,
    PartView,
    ResultsBody,
    ResultT,
    TextBody,
    ThinkingView,
    ToolCallView,
    ToolResultView,
)
from web.timeline.damage import inspect_record
from web.timeline.links import inline_data_view, location_view
from web.timeline.order import CallIndex, Entry, call_anchor, flatten, msg_anchor, result_anchor

MAX_FIELD_CHARS = 20_000
"""A longer field shows its head and says how much is hidden: one huge tool result must not make a page huge."""

COMPACT_JSON_CHARS = 100

MAX_HISTORY_DEPTH = 6
"""Histories nested deeper than this show their size, not their cards: the page must stay bounded."""

_MEDIA_KINDS: dict[type[BaseMessage], tuple[CardKind, str]] = {
    ImageMessage: ("user-image", "image"),
    AudioMessage: ("user-audio", "audio"),
    VideoMessage: ("user-video", "video"),
    AttachmentMessage: ("user-attachment", "file"),
    UrlMessage: ("user-url", "link"),
}
_MEDIUM_OF_KIND: dict[CardKind, str] = dict(_MEDIA_KINDS.values())

# The card kind of each subclass name, for the class a repair infers ("ImageMessage" -> "user-image").
_REPAIR_KINDS: dict[str, CardKind] = {
    cls.__name__: cast(CardKind, tag.replace(":", "-")) for tag, cls in MESSAGE_TAGS.items()
}


def build_card(entry: Entry, calls: CallIndex) -> Card:
    """The card for one entry; ``calls`` resolves tool call <-> result links across the timeline."""
    msg = entry.message
    damage = inspect_record(msg)
    kind, body = _kind_and_body(msg, damage, calls, entry.depth)
    parent_id = entry.parent_id
    return Card(
        msg_id=msg.msg_id,
        anchor=msg_anchor(msg.msg_id),
        kind=kind,
        role=msg.role,
        msg_type=getattr(msg, "msg_type", None),
        create_ts=msg.create_ts,
        when=format_ts(msg.create_ts),
        creator=_person(msg.creator) if msg.creator is not None else None,
        placement=entry.placement,
        parent_id=parent_id,
        parent_anchor=msg_anchor(parent_id) if parent_id is not None else None,
        depth=entry.depth,
        body=body,
        damage=damage,
        metadata=cap(pretty_json(msg.additional_kwargs), "/additional_kwargs") if msg.additional_kwargs else None,
        extra=tuple(cap(f"{k}: {_compact(v)}", f"/{pointer_token(k)}") for k, v in (msg.model_extra or {}).items()),
        incomplete=incomplete_reason(msg.additional_kwargs),
    )


def build_cards(entries: Sequence[Entry], calls: CallIndex) -> list[Card]:
    """Cards for a slice of entries, in order."""
    return [build_card(entry, calls) for entry in entries]


def _kind_and_body(msg: Message, damage: Damage | None, calls: CallIndex, depth: int) -> tuple[CardKind, CardBody]:
    if isinstance(msg, TextMessage):
        return "user-text", TextBody(cap(msg.content, "/content"))
    if isinstance(msg, ImageMessage | AudioMessage | VideoMessage | AttachmentMessage | UrlMessage):
        kind, medium = _MEDIA_KINDS[type(msg)]
        return kind, MediaBody(medium, location_view(str(msg.content)))
    if isinstance(msg, ContactMessage):
        return "user-contact", _contact(msg.content)
    if isinstance(msg, HistoryMessage):
        return "user-history", _history(msg.content, depth)
    if isinstance(msg, MultiPartMessage):
        return "user-multipart", PartsBody(_parts(msg.content, "/content"))
    if isinstance(msg, AssistantTextMessage):
        body = _assistant(msg, msg.reasoning_content, calls)
        return ("tfl" if _script_only(body) else "assistant-text"), body
    return _base_kind_and_body(msg, damage, calls, depth)


def _base_kind_and_body(
    msg: BaseMessage, damage: Damage | None, calls: CallIndex, depth: int
) -> tuple[CardKind, CardBody]:
    """System, tool, console and function records, and damaged user/assistant ones."""
    role = msg.role
    match role:
        case "system":
            return "system", TextBody(cap(text_of(msg.content), "/content"))
        case "tool":
            return "tool", _tool(msg, calls)
        case "console":
            return "console", _console(msg)
        case "function":
            res = msg.function_res
            if res is not None:
                return "function", FunctionBody(
                    cap(res.name, "/function_res/name"), cap(res.result, "/function_res/result")
                )
            name = msg.additional_kwargs.get("name")
            named = cap(name, "/additional_kwargs/name") if isinstance(name, str) else ""
            return "function", FunctionBody(named, cap(text_of(msg.content), "/content"))
        case "assistant":
            # The reasoning did not survive the round trip; show what did.
            return "assistant-text", _assistant(msg, None, calls)
        case "user":
            return _repaired_user(msg, damage, depth)
        case _:
            assert_never(role)


def _repaired_user(msg: BaseMessage, damage: Damage | None, depth: int) -> tuple[CardKind, CardBody]:
    """A damaged user record, shown as the class its repair infers, from the fields that survived."""
    kind = _REPAIR_KINDS.get(damage.inferred if damage else "", "user-text")
    content = msg.content
    if kind == "user-contact" and isinstance(content, BaseUser):
        return kind, _contact(content)
    if kind == "user-history" and isinstance(content, list):
        return kind, _history([m for m in content if isinstance(m, BaseMessage)], depth)
    if kind == "user-multipart" and isinstance(content, list):
        return kind, PartsBody(_parts([p for p in content if not isinstance(p, BaseMessage)], "/content"))
    if kind in _MEDIUM_OF_KIND and isinstance(content, str):
        return kind, MediaBody(_MEDIUM_OF_KIND[kind], location_view(content))
    return "user-text", TextBody(cap(text_of(content), "/content"))


def _assistant(msg: BaseMessage, reasoning: str | Sequence[Any] | None, calls: CallIndex) -> AssistantBody:
    blocks = tuple(_thinking(b, i) for i, b in enumerate(reasoning)) if isinstance(reasoning, list | tuple) else ()
    return AssistantBody(
        text=cap(text_of(msg.content), "/content"),
        reasoning_text=cap(reasoning, "/reasoning_content") if isinstance(reasoning, str) else None,
        reasoning_blocks=blocks,
        tool_calls=tuple(_call(msg.msg_id, c, calls, i) for i, c in enumerate(msg.tool_calls or ())),
        function_call=_function_call(msg.msg_id, msg.function_call) if msg.function_call else None,
        scripts=tuple(cap(script, f"/tfl_scripts/{i}") for i, script in enumerate(msg.tfl_scripts or ())),
    )


def _script_only(body: AssistantBody) -> bool:
    """An assistant record whose only product is TFL scripts is a tfl card; otherwise scripts ride along."""
    return bool(body.scripts) and not (body.text or body.has_reasoning or body.tool_calls or body.function_call)


def _thinking(block: Any, index: int) -> ThinkingView:
    if isinstance(block, ThinkingBlock):
        return ThinkingView(
            "signed" if block.signature else "unsigned", cap(block.thinking, f"/reasoning_content/{index}/thinking")
        )
    data = getattr(block, "data", "")
    return ThinkingView("redacted", f"{len(data):,} characters of encrypted reasoning")


def _call(msg_id: str, call: ToolCall, calls: CallIndex, index: int) -> ToolCallView:
    arguments, valid = pretty_arguments(call.arguments, f"/tool_calls/{index}/arguments")
    target = calls.result_of(call.id)
    return ToolCallView(
        call_id=call.id,
        name=call.name,
        arguments=arguments,
        valid_json=valid,
        anchor=call_anchor(msg_id, call.id),
        result_anchor=target.anchor if target else None,
        result_card=target.card if target else None,
    )


def _function_call(msg_id: str, call: FunctionCall) -> ToolCallView:
    arguments, valid = pretty_arguments(call.arguments, "/function_call/arguments")
    return ToolCallView("", call.name, arguments, valid, call_anchor(msg_id, "function"), None, None)


def _tool(msg: BaseMessage, calls: CallIndex) -> ResultsBody[ToolResultView]:
    results: list[ToolResultView] = []
    for i, res in enumerate(msg.tool_reses or ()):
        if isinstance(res, str):
            results.append(ToolResultView(None, None, cap(res, f"/tool_reses/{i}"), False, (), None, None, None))
            continue
        target = calls.call_of(res.call_id)
        results.append(
            ToolResultView(
                call_id=res.call_id,
                name=res.name,
                text=cap(res.result, f"/tool_reses/{i}/result"),
                is_error=res.is_error,
                attachments=_parts(res.attachments, f"/tool_reses/{i}/attachments"),
                anchor=result_anchor(msg.msg_id, res.call_id),
                call_anchor=target.anchor if target else None,
                call_card=target.card if target else None,
            )
        )
    return _results_body(results, msg)


def _console(msg: BaseMessage) -> ResultsBody[ConsoleView]:
    views: list[ConsoleView] = []
    for i, res in enumerate(msg.console_reses or ()):
        at = f"/console_reses/{i}"
        if isinstance(res, ConsoleResult):
            meta = cap(pretty_json(res.meta), f"{at}/meta") if res.meta else None
            summary = cap(res.summary_result, f"{at}/summary_result") if res.summary_result is not None else None
            views.append(
                ConsoleView(
                    cap(res.result, f"{at}/result"), summary, _parts(res.attachments, f"{at}/attachments"), meta
                )
            )
        else:
            views.append(ConsoleView(cap(res, at), None, (), None))
    return _results_body(views, msg)


def _results_body(results: Sequence[ResultT], msg: BaseMessage) -> ResultsBody[ResultT]:
    """The results, or the message's bare content when it has none."""
    return ResultsBody(tuple(results), "" if results else cap(text_of(msg.content), "/content"))


def _contact(user: BaseUser) -> ContactBody:
    extra = tuple((str(k), _compact(v)) for k, v in (user.model_extra or {}).items())
    return ContactBody(user.uid, user.name, extra)


def _history(messages: Sequence[Message], depth: int) -> HistoryBody:
    if depth + 1 > MAX_HISTORY_DEPTH:
        return HistoryBody(count=len(messages), cards=(), hidden=len(messages))
    entries = flatten(messages, placement="nested", depth=depth + 1)
    return HistoryBody(count=len(messages), cards=tuple(build_cards(entries, CallIndex.of(entries))))


def _parts(parts: Sequence[MsgPart], at: str) -> tuple[PartView, ...]:
    views: list[PartView] = []
    for i, part in enumerate(parts):
        if isinstance(part, TextPart):
            views.append(PartView("text", text=cap(part.text, f"{at}/{i}/text")))
            continue
        if part.location is not None:
            location = location_view(part.location, media_type=part.media_type)
        elif part.data is not None:
            location = inline_data_view(part.data, part.media_type)
        else:
            location = None
        views.append(
            PartView(
                part.type,
                location=location,
                detail=cap(part.detail, f"{at}/{i}/detail") if part.detail is not None else None,
                filename=getattr(part, "filename", None),
            )
        )
    return tuple(views)


_FIELD_LIMIT: ContextVar[int | None] = ContextVar("field_limit", default=MAX_FIELD_CHARS)


@contextmanager
def whole_fields() -> Iterator[None]:
    """Cards built inside this block keep every field whole: how one field's full value is read."""
    token = _FIELD_LIMIT.set(None)
    try:
        yield
    finally:
        _FIELD_LIMIT.reset(token)


def cap(text: str, field: str) -> FieldText:
    """``text`` as shown on a card: whole when short, else its head and a note of what was left out.

    ``field`` is the JSON pointer of the record field it shows, so the whole value can be asked for.
    """
    limit = _FIELD_LIMIT.get()
    if limit is None or len(text) <= limit:
        return FieldText(text, field, len(text))
    limit = safe_cut(text, limit)
    note = f"\n… [{len(text) - limit:,} more characters not shown; {len(text):,} in all]"
    return FieldText(text[:limit] + note, field, len(text))


def pretty_arguments(text: str, field: str = "") -> tuple[str, bool]:
    """Tool-call arguments pretty-printed when they are JSON; otherwise the text as the model wrote it."""
    if not text.strip():
        return "", True
    try:
        value = json.loads(text)
    except ValueError:
        return cap(text, field), False
    # Short arguments read best on one line; anything longer is indented.
    compact = json.dumps(value, ensure_ascii=False, default=repr)
    return (compact, True) if len(compact) <= COMPACT_JSON_CHARS else (cap(pretty_json(value), field), True)


def pretty_json(value: Any) -> str:
    """Indented JSON with non-ASCII kept readable; anything JSON cannot hold is shown by its repr."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)


def _person(user: BaseUser) -> str:
    return f"{user.name} ({user.uid})" if user.name else user.uid


def format_ts(ts: int) -> str:
    """``create_ts`` (milliseconds) as UTC wall time with milliseconds; the raw number when out of range."""
    try:
        moment = datetime.fromtimestamp(ts / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return str(ts)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
