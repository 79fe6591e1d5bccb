"""The turn list of a dialect whose roles must alternate (Anthropic, Gemini): what both do with the same kinds.

Adjacent same-role turns merge; user text, system text and console output are placed the same way in
both; the history must start with the user. A dialect subclasses :class:`Turns` for its own merge rule
(Anthropic's thinking leads its turn, Gemini keeps a functionResponse content apart) and its own words.
"""

from __future__ import annotations

from typing import ClassVar

from core.llm.messages import LLMSystemMessage, LLMTFLMessage, LLMUserMessage
from core.providers.base import (
    EMPTY_TURN_PLACEHOLDER,
    FIRST_USER_PLACEHOLDER,
    JSON,
    RequestContext,
    console_text,
)

# System text after the first turn: the seed sends it as user text (a "system" role inside the turns only
# exists on the newest models, docs/providers.md section 3); this prefix keeps it recognisable.
MID_SYSTEM_PREFIX = "[system] "
# The preflight rules (core/preflight/anthropic.py and gemini.py use the same ids) the placeholders answer.
NON_EMPTY_RULE = "non-empty-content"
FIRST_USER_RULE = "first-message-user"


class Turns:
    """The turns being built: ``{"role": ..., KEY: [items]}``, adjacent same-role turns merged."""

    KEY: ClassVar[str]  # where a turn's items are: "content" (Anthropic), "parts" (Gemini)
    MODEL_ROLE: ClassVar[str]  # the assistant's role: "assistant", "model"
    TEXT_ITEM: ClassVar[str]  # how the warnings name a text item: "a user text block", "user text"
    NO_TURNS_RULE: ClassVar[str]  # the preflight rule a placeholder turn answers: "messages-required"...

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        self.turns: list[JSON] = []
        self.system: list[JSON] = []

    def text(self, text: str) -> JSON:
        """A text item in this dialect's shape."""
        raise NotImplementedError

    def merges(self, role: str) -> bool:
        """Whether items of ``role`` go into the last turn rather than a new one."""
        return bool(self.turns) and self.turns[-1]["role"] == role

    def push(self, role: str, items: list[JSON], msg_id: str | None) -> None:
        """Add ``msg_id``'s items as a turn of ``role``, or to the last turn when it merges."""
        if self.merges(role):
            self.extend_last(items, msg_id)
        else:
            self.turns.append(self.ctx.tag({"role": role, self.KEY: items}, msg_id))

    def extend_last(self, items: list[JSON], msg_id: str | None) -> None:
        """``msg_id``'s items at the end of the last turn (of the same role)."""
        tag = self.ctx.tag
        merged: list[JSON] = self.turns[-1][self.KEY]
        for item in items:
            merged.append(tag(item, msg_id))

    def push_user(self, msg: LLMUserMessage, items: list[JSON]) -> None:
        """A user turn's items; an empty one is sent as placeholder text (no provider takes an empty turn)."""
        if not items:
            self.ctx.warn(msg.msg_id, "user", "empty user turn; placeholder text sent", NON_EMPTY_RULE)
        self.push("user", items or [self.text(EMPTY_TURN_PLACEHOLDER)], msg.msg_id)

    def push_system(self, msg: LLMSystemMessage) -> None:
        """System text: the system prompt before the first turn, user text after it."""
        if not self.turns:
            if msg.content:
                self.system.append(self.ctx.tag(self.text(msg.content), msg.msg_id))
            return
        self.ctx.warn(msg.msg_id, "system", f"system message after the first turn; sent as {self.TEXT_ITEM}")
        self.push("user", [self.text(MID_SYSTEM_PREFIX + msg.content)], msg.msg_id)

    def push_console(self, msg: LLMTFLMessage) -> None:
        """Console output of the TFL interpreter, as user text (no provider has a console role)."""
        self.push("user", [self.text(console_text(msg))], msg.msg_id)

    def finish(self) -> list[JSON]:
        """The turns, starting with the user (Anthropic/Bedrock "first message must use the user role",
        anthropic-sdk-typescript#622; Gemini: model-first is unsafe)."""
        turns = self.turns
        if not turns:
            # Anthropic 400 "messages must have at least one element" (Helicone/helicone#5257); Gemini's
            # generateContent "contents[] Required" [API reference]: system text alone still needs a user turn.
            reason = "no turn besides the system prompt; a placeholder user turn was sent"
            self.ctx.warn(None, "history", reason, self.NO_TURNS_RULE)
            turns.append({"role": "user", self.KEY: [self.text(EMPTY_TURN_PLACEHOLDER)]})
        elif turns[0]["role"] != "user":
            self.ctx.warn(
                self.msg_id_of(turns[0]),
                "history",
                f"history starts with {'an' if self.MODEL_ROLE[0] in 'aeiou' else 'a'} {self.MODEL_ROLE} turn; "
                "a placeholder user turn was inserted",
                FIRST_USER_RULE,
            )
            turns.insert(0, {"role": "user", self.KEY: [self.text(FIRST_USER_PLACEHOLDER)]})
        return turns

    def msg_id_of(self, node: JSON) -> str | None:
        """The msg_id a turn or an item came from (None when it was made here)."""
        tag = self.ctx.tag_of(node)
        return tag if isinstance(tag, str) else None
