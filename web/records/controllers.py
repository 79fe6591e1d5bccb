"""One record's field whole, and one masked secret revealed: what a card asks for on a click.

- ``GET /conversations/{id}/records/{msg_id}/field?pointer=``: the whole value of a card field, as a page
  (the "show all" link without JavaScript).
- ``GET /api/conversations/{id}/records/{msg_id}/field?pointer=``: the same as JSON segments, secrets masked.
- ``GET /api/conversations/{id}/secrets/{digest}``: the one secret of this conversation with that digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, QueryParameter
from litestar.response import Template

from core import MESSAGES_ADAPTER
from core.accounts.roles import Role
from web import masking, urls
from web.auth.access import PageController, needs
from web.deps import SourceDep
from web.source import StoreSource
from web.timeline.fields import field_text, find_record

Pointer = Annotated[str, QueryParameter(max_length=300, description="The field's JSON pointer, as the card gives it.")]


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece of a field's text: plain, or a masked secret named by ``secret`` (its digest)."""

    text: str
    secret: str | None = None


@dataclass(frozen=True, slots=True)
class FieldValue:
    """The whole value of one field of one record, secrets masked; ``text`` is the pieces joined."""

    conversation_id: str
    msg_id: str
    pointer: str
    chars: int
    text: str
    pieces: list[Piece]


@dataclass(frozen=True, slots=True)
class RevealedSecret:
    """One secret's value, asked for by its digest."""

    digest: str
    value: str


@dataclass(frozen=True, slots=True)
class FieldPage(urls.ConversationLinks):
    """``/conversations/{id}/records/{msg_id}/field``: one field's whole value on a page of its own."""

    conversation_id: str
    msg_id: str
    pointer: str
    text: str


def _whole(source: StoreSource, conversation_id: str, msg_id: str, pointer: str) -> str:
    record = find_record(source.load(conversation_id), msg_id)
    text = field_text(record, pointer) if record is not None else None
    if text is None:
        raise NotFoundException(f"No field {pointer!r} on record {msg_id!r}.")
    return text


class RecordController(PageController):
    """The whole value of one card field, as a page."""

    @get("/conversations/{conversation_id:str}/records/{msg_id:str}/field", name="record-field", sync_to_thread=True)
    def field(self, conversation_id: urls.PathId, msg_id: urls.PathId, pointer: Pointer, source: SourceDep) -> Template:
        """The field whole, secrets masked (each revealed on a click), escaped like every card."""
        conversation_id, msg_id = urls.from_segment(conversation_id), urls.from_segment(msg_id)
        text = _whole(source, conversation_id, msg_id, pointer)
        return Template("records/field.html", context={"page": FieldPage(conversation_id, msg_id, pointer, text)})


class RecordApiController(Controller):
    """A card field whole, and a secret revealed, as JSON."""

    opt = needs(Role.VIEWER)

    path = "/api/conversations/{conversation_id:str}"
    tags = ["conversations"]  # noqa: RUF012 - Litestar reads a class attribute

    @get("/records/{msg_id:str}/field", name="api-record-field", sync_to_thread=True)
    def field(
        self, conversation_id: urls.PathId, msg_id: urls.PathId, pointer: Pointer, source: SourceDep
    ) -> FieldValue:
        """The whole value of one field of one record (the card's text, unclipped), secrets masked."""
        conversation_id, msg_id = urls.from_segment(conversation_id), urls.from_segment(msg_id)
        text = _whole(source, conversation_id, msg_id, pointer)
        pieces = [Piece(s.text, s.secret.digest if s.secret else None) for s in masking.segments(text)]
        return FieldValue(conversation_id, msg_id, pointer, len(text), "".join(p.text for p in pieces), pieces)

    @get("/secrets/{digest:str}", name="api-secret", sync_to_thread=True)
    def secret(self, conversation_id: urls.PathId, digest: FromPath[str], source: SourceDep) -> RevealedSecret:
        """The value of the one secret in this conversation whose masked form names ``digest`` (404 otherwise)."""
        conversation_id = urls.from_segment(conversation_id)
        loaded = source.load(conversation_id)
        texts = masking.strings(MESSAGES_ADAPTER.dump_python(list(loaded.messages), mode="json"))
        value = masking.reveal(texts, digest)
        if value is None:
            raise NotFoundException("No secret with this digest in this conversation.")
        return RevealedSecret(digest, value)
