"""Any stored message the format allows renders as cards: no crash, one card each, nothing live.

Uses the lead's wire-form strategies (``tests/strategies.py``), so every shape FORMAT.md
allows (damaged records, nested histories with traces, unknown keys, odd URLs) reaches
the view model and the templates.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core import MESSAGE_ADAPTER, BaseMessage, HistoryMessage
from core.integrity import infer_class, is_damaged
from tests.strategies import messages
from tests.web.web_html import live_content, parse
from web.app import jinja_environment
from web.conversation_page import ConversationPage
from web.replays.forms import RerunForms
from web.settings import Settings
from web.timeline import CARD_KINDS, Timeline

_ENV = jinja_environment(Settings())
_ENV.globals["csrf_token"] = lambda: "token"
_TEMPLATE = _ENV.get_template("conversations/conversation.html")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(max_depth=2), min_size=1, max_size=4))
@example([{"role": "user", "content": [{"role": "user", "content": ""}]}])  # a damaged history holding a damaged record
def test_any_messages_render_as_inert_cards(raw: list[dict[str, Any]]) -> None:
    parsed = [MESSAGE_ADAPTER.validate_python({**m, "conversation_id": "c"}) for m in raw]
    timeline = Timeline(parsed)
    page = timeline.page(0, 10_000)
    html = _TEMPLATE.render(page=ConversationPage("c", "t", page, 100, 0, RerunForms("c", ())))
    articles = [el for el in parse(html).elements if el.tag == "article"]
    # One timeline card per message and per trace record (traces of records included); histories nest theirs.
    assert len(timeline) == len(page.cards) == sum(1 for m in parsed for _ in _trace_walk(m))
    assert all(el.get("data-kind") in CARD_KINDS for el in articles)
    damaged = sum(1 for el in articles if el.get("data-integrity") == "type-lost")
    assert damaged == sum(1 for m in parsed for item in _card_walk(m) if is_damaged(item))
    assert live_content(html) == []


def _trace_walk(message: Any) -> Any:
    """The message and its trace records, recursively, but not what a history nests (that is inside a card)."""
    yield message
    for record in getattr(getattr(message, "intermediate_trace", None), "records", ()):
        yield from _trace_walk(record)


def _card_walk(message: Any) -> Any:
    """Every message that gets a card: the message, its trace records and a forwarded history's messages.

    A damaged user record is shown as the class its repair infers, so one whose content is a message list
    nests its messages as a history does. Messages nested in any other content (a damaged assistant record
    whose content is a message list) are not cards; their record's card shows its content as text.
    """
    yield message
    for record in getattr(getattr(message, "intermediate_trace", None), "records", ()):
        yield from _card_walk(record)
    if isinstance(message, HistoryMessage):
        for nested in message.content:
            yield from _card_walk(nested)
    elif _shown_as_history(message):
        for nested in message.content:
            if isinstance(nested, BaseMessage):
                yield from _card_walk(nested)


def _shown_as_history(message: Any) -> bool:
    """A damaged user record whose repair infers a history (its content is a message list)."""
    content = getattr(message, "content", None)
    return (
        is_damaged(message)
        and message.role == "user"
        and isinstance(content, list)
        and infer_class("user", content)[0] is HistoryMessage
    )
