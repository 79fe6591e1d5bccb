"""BaseMessage: every field of the seed's table, and the ``to_llm_request`` contract.

System, tool, console and function messages have no subclass: they are plain
BaseMessage records and convert here. User and assistant messages must be
subclasses; a bare one is what TFROB-299 left behind, and converting it raises
the seed's ContractError instead of guessing (a guess would silently drop
tool calls and reasoning).
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from core.errors import ContractError
from core.llm.messages import (
    LLMFunctionMessage,
    LLMMessage,
    LLMSystemMessage,
    LLMTFLMessage,
    LLMToolMessage,
    LLMUserMessage,
)
from core.messages.convert import parts_to_llm, text_of
from core.messages.objects import (
    BaseGroup,
    BaseUser,
    ConsoleResult,
    FunctionCall,
    FunctionResult,
    ToolCall,
    ToolReturn,
)
from core.messages.parts import MsgPart
from core.messages.refs import InstanceOnly, PathRef, UrlRef

if TYPE_CHECKING:
    from core.messages.union import Message

Role = Literal["system", "user", "assistant", "function", "tool", "console"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "function", "tool", "console")


def now_ms() -> int:
    """Milliseconds since the epoch: the unit of ``create_ts`` and of every time the store records."""
    return time.time_ns() // 1_000_000


def new_msg_id() -> str:
    """A fresh message id for messages built in Python (stored records always carry theirs)."""
    return uuid.uuid4().hex


# Smart mode with ``str`` first: JSON strings stay strings and serialise at plain-str speed, while a
# Python-built PathRef/UrlRef keeps its kind (smart mode prefers the exact instance match wherever
# it stands; the serialiser tries members in order, so the instance-only ones come last). A list is
# a nested history when its items carry a role, else parts. Plain members, not a callable
# discriminator: a callable makes pydantic-core convert the whole JSON value to Python first.
BaseContent = (
    str
    | BaseUser
    | list["Message"]
    | list[MsgPart]
    | Annotated[PathRef, InstanceOnly()]
    | Annotated[UrlRef, InstanceOnly()]
)


class BaseMessage(BaseModel):
    """One message of the agent: the seed's BaseMessage with every field of its table.

    Unknown keys are kept (extra="allow"): whatever a newer agent wrote comes back on dump.
    """

    model_config = ConfigDict(extra="allow")

    role: Role
    content: BaseContent = ""
    tool_calls: list[ToolCall] | None = None
    # Serialised by each item's own type: pydantic's union serialiser is slower per item (bench/PERFORMANCE.md).
    tool_reses: SerializeAsAny[list[str | ToolReturn]] | None = None
    function_call: FunctionCall | None = None
    function_res: FunctionResult | None = None
    console_reses: SerializeAsAny[list[str | ConsoleResult]] | None = None
    tfl_scripts: list[str] | None = None
    additional_kwargs: dict[str, Any] = Field(default_factory=dict)
    create_ts: int = Field(default_factory=now_ms)
    creator: BaseUser | None = None
    group: BaseGroup | None = None
    msg_id: str = Field(default_factory=new_msg_id)
    conversation_id: str = ""

    @property
    def tag(self) -> str:
        """The discriminator key: ``role:msg_type`` for subclasses, the role alone for base records."""
        msg_type = getattr(self, "msg_type", None)
        return f"{self.role}:{msg_type}" if isinstance(msg_type, str) else self.role

    def to_llm_request(self) -> LLMMessage | list[LLMMessage]:
        """This message in the provider-neutral request format (the seed's contract).

        User and assistant subclasses override this; reaching it with those roles means
        the record lost its subclass, so it raises rather than guess.
        """
        # Read from ``__dict__`` (every field is there, validated or not): BaseModel's ``__getattr__`` keeps CPython
        # from specialising attribute reads, and this runs per record of every build (bench/PERFORMANCE.md).
        fields = self.__dict__
        role: Role = fields["role"]
        if role == "tool":  # the most frequent record of a trace: tested first
            reses: list[str | ToolReturn] | None = fields["tool_reses"]
            if reses is not None and len(reses) == 1:
                # The usual record, one result without attachments, built here: the general loop and its call
                # would weigh on the most frequent record of a trace.
                res = reses[0]
                if type(res) is ToolReturn:
                    r = res.__dict__
                    if not r["attachments"]:
                        return [LLMToolMessage(r["result"], r["call_id"], r["name"], r["is_error"], fields["msg_id"])]
            return self._tool_to_llm()
        match role:
            case "assistant" | "user":
                raise ContractError(role, self.msg_id)
            case "system":
                return LLMSystemMessage(content=text_of(self.content), msg_id=self.msg_id)
            case "console":
                return self._console_to_llm()
            case "function":
                return self._function_to_llm()
            case _:
                assert_never(role)

    def _console_to_llm(self) -> list[LLMMessage]:
        """Each ConsoleResult becomes an LLMTFLMessage, followed by its attachments as a user turn."""
        if not self.console_reses:
            return [LLMTFLMessage(content=text_of(self.content), msg_id=self.msg_id)]
        out: list[LLMMessage] = []
        for res in self.console_reses:
            if isinstance(res, str):
                out.append(LLMTFLMessage(content=res, msg_id=self.msg_id))
                continue
            out.append(LLMTFLMessage(content=res.result, summary=res.summary_result, meta=res.meta, msg_id=self.msg_id))
            if res.attachments:
                parts = parts_to_llm(res.attachments)
                out.append(LLMUserMessage(content=parts, msg_id=self.msg_id, attachment_of="console"))
        return out

    def _tool_to_llm(self) -> list[LLMMessage]:
        """Each ToolReturn becomes an LLMToolMessage, followed by its attachments as a user turn."""
        if not self.tool_reses:
            call_id = self.additional_kwargs.get("tool_call_id")
            return [
                LLMToolMessage(
                    content=text_of(self.content),
                    tool_call_id=call_id if isinstance(call_id, str) else None,
                    msg_id=self.msg_id,
                )
            ]
        msg_id = self.msg_id
        out: list[LLMMessage] = []
        for res in self.tool_reses:
            if isinstance(res, str):
                # A bare string names no call; adapters pair it by position or treat it as an orphan.
                out.append(LLMToolMessage(res, None, None, False, msg_id))
                continue
            out.append(LLMToolMessage(res.result, res.call_id, res.name, res.is_error, msg_id))
            if res.attachments:
                parts = parts_to_llm(res.attachments)
                out.append(LLMUserMessage(parts, msg_id, res.call_id))
        return out

    def _function_to_llm(self) -> LLMFunctionMessage:
        if self.function_res is not None:
            return LLMFunctionMessage(name=self.function_res.name, content=self.function_res.result, msg_id=self.msg_id)
        name = self.additional_kwargs.get("name")
        return LLMFunctionMessage(
            name=name if isinstance(name, str) else "", content=text_of(self.content), msg_id=self.msg_id
        )
