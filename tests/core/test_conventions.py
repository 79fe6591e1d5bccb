"""Meta-tests: the seed's risk table automated, and the public API pinned."""

from __future__ import annotations

import importlib
import pkgutil
import typing
from typing import Annotated, Any, Optional, get_args, get_origin

import pytest
from pydantic import BaseModel

import core
from core import AssistantMessage, BaseMessage, Message, UserAndAssMsg, UserMessage
from tests.core.test_tfrob299 import PreFixTrace

# Classes with subclasses: a container annotated with one of these drops the subclass fields on dump.
WIDE_BASES = (BaseMessage, UserMessage, AssistantMessage)


def _core_models() -> list[type[BaseModel]]:
    for info in pkgutil.walk_packages(core.__path__, "core."):
        importlib.import_module(info.name)
    seen: list[type[BaseModel]] = []
    stack: list[type[BaseModel]] = [BaseModel]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("core.") and sub not in seen:
                seen.append(sub)
    return seen


def bare_base_positions(annotation: Any, where: str) -> list[str]:
    """Where inside ``annotation`` a wide message base class stands outside the Message unions."""
    if any(annotation is u or annotation == u for u in (Message, UserAndAssMsg)):
        return []
    if isinstance(annotation, type) and issubclass(annotation, WIDE_BASES) and annotation in WIDE_BASES:
        return [where]
    origin = get_origin(annotation)
    if origin is Annotated:
        return bare_base_positions(get_args(annotation)[0], where)
    found: list[str] = []
    for i, arg in enumerate(get_args(annotation)):
        if arg is Ellipsis:
            continue
        found += bare_base_positions(arg, f"{where}[{i}]")
    return found


def field_violations(model: type[BaseModel]) -> list[str]:
    return [
        pos
        for name, info in model.model_fields.items()
        for pos in bare_base_positions(info.annotation, f"{model.__name__}.{name}")
    ]


def test_no_core_model_holds_messages_in_a_bare_base_class_annotation() -> None:
    models = _core_models()
    assert len(models) > 20, "the walk found too few models to mean anything"
    violations = [v for model in models for v in field_violations(model)]
    assert violations == []


@pytest.mark.parametrize(
    "annotation",
    [
        list[BaseMessage],
        tuple[BaseMessage, ...],
        typing.Sequence[BaseMessage],
        dict[str, BaseMessage],
        Optional[list[BaseMessage]],  # noqa: UP045 - the old spelling must be caught too
        list[UserMessage] | None,
        BaseMessage,
    ],
)
def test_the_meta_test_catches_every_container_shape(annotation: Any) -> None:
    assert bare_base_positions(annotation, "f") != []


def test_the_meta_test_catches_the_pre_fix_schema() -> None:
    assert field_violations(PreFixTrace) == ["PreFixTrace.records[0]"]


def test_public_api_is_pinned() -> None:
    assert core.__all__ == sorted(core.__all__, key=lambda n: (not n.isupper(), n))
    assert set(core.__all__) == {
        "DEFAULT_TAG", "MESSAGES_ADAPTER", "MESSAGE_ADAPTER", "MESSAGE_TAGS", "AssistantMessage",
        "AssistantTextMessage", "AttachmentMessage", "AudioMessage", "AudioPart", "BaseGroup", "BaseMessage",
        "BaseUser", "ChainContext", "ConsoleResult", "ContactMessage", "ContractError", "Conversation", "FilePart",
        "FunctionCall", "FunctionResult", "HistoryMessage", "ImageMessage", "ImagePart", "InputError",
        "IntermediateTrace", "IntermediateTraceSnapshot", "LLMAssistantMessage", "LLMAudioPart", "LLMFilePart",
        "LLMFunctionCall", "LLMFunctionMessage", "LLMImagePart", "LLMMessage", "LLMRedactedThinking",
        "LLMSystemMessage", "LLMTFLMessage", "LLMTextPart", "LLMThinking", "LLMToolCall", "LLMToolMessage",
        "LLMUserMessage", "LLMUserPart", "LLMVideoPart", "Message", "MisuseError", "MsgPart", "MultiPartMessage",
        "PathRef", "PromptContext", "ProviderError", "ReasoningBlock", "RedactedThinkingBlock", "Role",
        "TextMessage", "TextPart", "ThinkingBlock", "ToolCall", "ToolReturn", "TraceloupeError",
        "UnknownNameError", "UrlMessage", "UrlRef", "UserAndAssMsg", "UserMessage", "VideoMessage", "VideoPart",
        "get_discriminator_value",
    }  # fmt: skip
    for name in core.__all__:
        assert hasattr(core, name)


def test_every_subclass_is_in_both_unions_under_its_tag() -> None:
    from core import MESSAGE_TAGS, get_discriminator_value

    for tag, cls in MESSAGE_TAGS.items():
        instance_tag = get_discriminator_value({"role": tag.split(":")[0], "msg_type": tag.split(":")[1]})
        assert instance_tag == tag
        members = {get_args(a)[0] for a in get_args(get_args(Message)[0])}
        assert cls in members
        members_ua = {get_args(a)[0] for a in get_args(get_args(UserAndAssMsg)[0])}
        assert cls in members_ua
    in_core = _core_models()
    leaves = {c for c in in_core if issubclass(c, BaseMessage) and not set(c.__subclasses__()) & set(in_core)}
    assert leaves == set(MESSAGE_TAGS.values())
