"""Anthropic Messages (``POST /v1/messages``): providers.md section 3. Translation only."""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Sequence
from typing import assert_never

from core.llm.messages import (
    LLMAssistantMessage,
    LLMMediaPart,
    LLMMessage,
    LLMSystemMessage,
    LLMTFLMessage,
    LLMThinking,
    LLMToolMessage,
    LLMUserMessage,
    LLMUserPart,
)
from core.providers.base import (
    EMPTY_TURN_PLACEHOLDER,
    FIRST_USER_PLACEHOLDER,
    JSON,
    Dialect,
    RequestContext,
    RequestOptions,
    ToolSpec,
    arguments_object,
    assistant_text,
    console_text,
    map_parts,
)

# max_tokens is Required on every request [SDK: MessageCreateParamsBase].
DEFAULT_MAX_TOKENS = 4096
THINKING_BUDGET_TOKENS = 2048  # must stay below max_tokens [docs]
THINKING_DISABLED = {"type": "disabled"}  # [SDK: ThinkingConfigDisabledParam]
# Exactly these four image types; image/jpg, SVG, BMP are rejected [SDK: Base64ImageSourceParam.media_type].
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
# document sources: base64 PDF, plain text, or a PDF by URL [SDK: DocumentBlockParam].
PDF = "application/pdf"
# Audio and video have no block: they degrade to text [SDK: no audio/video block in ContentBlockParam].
NO_BLOCK_KINDS = frozenset({"audio", "video"})
# tool_use ids should match this [unverified; providers.md section 3]; others are rewritten consistently.
TOOL_ID_CHARS = string.ascii_letters + string.digits + "_-"
TOOL_ID_INVALID = re.compile(r"[^A-Za-z0-9_-]")
TOOL_ID_DIGEST_BYTES = 4  # 8 hex digits after a rewritten id
# System text after the first turn: the seed sends it as a user text block (role "system" inside messages only
# exists on the newest models, providers.md section 3); this prefix keeps it recognisable.
MID_SYSTEM_PREFIX = "[system] "
UNSIGNED_REASONING_DROPPED = "unsigned reasoning_content cannot be replayed to Anthropic; dropped"
# Build the turn a trace is made of (one call, no signed reasoning, no scripts) in the reformat loop rather
# than through _assistant. Off, every assistant turn goes through _assistant: the tests switch it off to
# check that both ways give the same body, warnings and provenance.
INLINE_COMMON_TURN = True


def tool_id(call_id: str | None) -> str:
    """A tool id Anthropic accepts: the same id when it already does; else its invalid characters as ``_``
    followed by a short digest of the id as it was.

    The digest keeps two ids apart that differ only in rejected characters (``a.b``, ``a b``): rewritten
    alike they would be two tool_use blocks with one id, which Anthropic rejects, and each result must still
    pair with its own call. Not cached: the usual id costs about 0.1 us to check, and a process-wide cache
    would make the first build of a trace (the one a reader waits for) slower than the builds after it.
    """
    text = call_id or "call"
    # Stripping the accepted characters leaves nothing exactly when the regex [A-Za-z0-9_-]+ would match the
    # whole id (text is never empty here), at about half the cost of fullmatch.
    if not text.lstrip(TOOL_ID_CHARS):
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=TOOL_ID_DIGEST_BYTES).hexdigest()
    return f"{TOOL_ID_INVALID.sub('_', text)}_{digest}"


class _Turns:
    """The messages list being built: adjacent same-role turns merge (roles must alternate)."""

    __slots__ = ("ctx", "turns")

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        self.turns: list[JSON] = []

    def push(self, role: str, blocks: list[JSON], msg_id: str | None) -> None:
        turns = self.turns
        if turns and turns[-1]["role"] == role:
            tag = self.ctx.tag
            merged = turns[-1]["content"]
            for block in blocks:
                merged.append(tag(block, msg_id))
        else:
            turns.append(self.ctx.tag({"role": role, "content": blocks}, msg_id))


class AnthropicDialect(Dialect):
    """Anthropic Messages: system at top level, blocks, tool_use/tool_result, signed thinking."""

    name = "anthropic"
    default_model = "claude-sonnet-4-6"
    description = "Anthropic Messages"

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        max_tokens = options.max_tokens or DEFAULT_MAX_TOKENS
        params: JSON = {"model": options.model or self.default_model, "max_tokens": max_tokens}
        if options.thinking is None:
            return params
        profile = self.profile(options)
        mode = profile.thinking
        if mode == "none":
            ctx.warn(None, "thinking", f"{profile.name} models have no extended thinking; no thinking parameter sent")
        elif options.thinking is False:
            params["thinking"] = THINKING_DISABLED
        elif mode == "adaptive":
            params["thinking"] = {"type": "adaptive"}
        elif mode == "budget":
            params["thinking"] = {"type": "enabled", "budget_tokens": min(THINKING_BUDGET_TOKENS, max_tokens - 1)}
        else:
            assert_never(mode)
        return params

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        out: list[JSON] = []
        for tool in tools:
            spec: JSON = {"name": tool.name}
            if tool.description:
                spec["description"] = tool.description
            spec["input_schema"] = dict(tool.parameters)
            out.append(spec)
        return out

    def reformat(self, messages: Sequence[LLMMessage], ctx: RequestContext) -> JSON:
        system: list[JSON] = []
        turns = _Turns(ctx)
        results: dict[str, JSON] = {}  # call id -> tool_result block of the current tool block
        out = turns.turns
        tag = ctx.tag
        tagged, tagged_id = ctx.tag_sinks()
        warned = ctx.warnings.append
        inline = INLINE_COMMON_TURN
        # The last tool_use's call id and its checked form: a result names the call just made (to_list put it
        # there), so an id is usually checked once, not twice.
        last_call: str | None = None
        last_tool_id = tool_id(last_call)
        # The role of the last turn (out[-1]["role"]), kept here: the hot branches read it once per record.
        last_role: str | None = None
        for msg in messages:
            # Exact types, hot cases first; the two kinds a trace is made of are built and merged inline: tags
            # and warnings appended as tag() and warn() would, one literal per node (a call each costs about
            # as much as the node; two nodes per record).
            if type(msg) is LLMToolMessage:
                call_id = msg.tool_call_id
                use_id = last_tool_id if call_id == last_call else tool_id(call_id)
                content = msg.content
                if inline and content and not msg.is_error:
                    block: JSON = {"type": "tool_result", "tool_use_id": use_id, "content": content}
                else:
                    block = _tool_result(msg, use_id)
                results[call_id or ""] = block
                if last_role == "user":
                    out[-1]["content"].append(tag(block, msg.msg_id))
                elif inline:
                    turn: JSON = {"role": "user", "content": [block]}
                    out.append(turn)
                    tagged(turn)
                    tagged_id(msg.msg_id)
                    last_role = "user"
                else:
                    out.append(tag({"role": "user", "content": [block]}, msg.msg_id))
                    last_role = "user"
                continue
            if type(msg) is LLMAssistantMessage:
                if results:
                    results.clear()  # the map is this loop's alone: emptied in place, not made again per turn
                calls = msg.tool_calls
                reasoning = msg.reasoning_content
                msg_id = msg.msg_id
                if len(calls) == 1 and inline and not msg.tfl_scripts and type(reasoning) is not tuple:
                    # The turn a trace is made of: text, unsigned reasoning (dropped, as _assistant does), one call.
                    if reasoning:
                        warned((msg_id, "reasoning", UNSIGNED_REASONING_DROPPED))
                    call = calls[0]
                    last_call = call.id
                    # tool_id inline for an id that needs no rewriting (the usual one)
                    last_tool_id = (
                        last_call if last_call and not last_call.lstrip(TOOL_ID_CHARS) else tool_id(last_call)
                    )
                    use: JSON = {
                        "type": "tool_use",
                        "id": last_tool_id,
                        "name": call.name,
                        "input": arguments_object(call, msg_id, ctx),
                    }
                    text = msg.content
                    blocks = [{"type": "text", "text": text}, use] if text else [use]
                    if last_role != "assistant":
                        turn = {"role": "assistant", "content": blocks}
                        out.append(turn)
                        tagged(turn)
                        tagged_id(msg_id)
                        last_role = "assistant"
                        continue
                else:
                    blocks = self._assistant(msg, ctx)
                    if calls:
                        last_call = calls[-1].id
                        last_tool_id = blocks[-1]["id"]
                if last_role == "assistant":
                    turns.push("assistant", blocks, msg_id)
                else:
                    out.append(tag({"role": "assistant", "content": blocks}, msg_id))
                    last_role = "assistant"
                continue
            # The rarer kinds go through push(); the last role is read back after them.
            if type(msg) is LLMUserMessage:
                target = results.get(msg.attachment_of or "")
                if target is not None:
                    self._fold(target, msg, ctx)
                else:
                    blocks = self._blocks(msg.content, msg.msg_id, ctx)
                    turns.push("user", blocks or [_text(EMPTY_TURN_PLACEHOLDER)], msg.msg_id)
                    if not blocks:
                        ctx.warn(msg.msg_id, "user", "empty user turn; placeholder text sent")
            elif type(msg) is LLMSystemMessage:
                if not turns.turns:
                    if msg.content:
                        system.append(ctx.tag(_text(msg.content), msg.msg_id))
                else:
                    ctx.warn(msg.msg_id, "system", "system message after the first turn; sent as a user text block")
                    turns.push("user", [_text(MID_SYSTEM_PREFIX + msg.content)], msg.msg_id)
            elif type(msg) is LLMTFLMessage:
                turns.push("user", [_text(console_text(msg))], msg.msg_id)
            else:
                # to_list turns legacy results into tool results; one reaching here is a bug upstream.
                raise AssertionError(f"{type(msg).__name__} cannot reach a dialect")
            last_role = out[-1]["role"] if out else None
        if out and out[0]["role"] != "user":
            ctx.warn(
                _first_msg_id(out[0], ctx),
                "history",
                "history starts with an assistant turn; a placeholder user turn was inserted",
            )
            out.insert(0, {"role": "user", "content": [_text(FIRST_USER_PLACEHOLDER)]})
        if ctx.options.thinking is False and out and out[-1]["role"] == "assistant":
            self._strip_final_thinking(out[-1], ctx)
        fragments: JSON = {}
        if system:
            fragments["system"] = system
        fragments["messages"] = out
        return fragments

    @staticmethod
    def _assistant(msg: LLMAssistantMessage, ctx: RequestContext) -> list[JSON]:
        msg_id = msg.msg_id
        reasoning = msg.reasoning_content
        text = msg.content if not msg.tfl_scripts else assistant_text(msg)
        blocks: list[JSON]
        if isinstance(reasoning, tuple):
            blocks = []
            # Replayed verbatim and first (BerriAI/litellm#15601): empty thinking text with a signature is kept.
            for item in reasoning:
                if type(item) is LLMThinking:
                    if item.signature:
                        blocks.append({"type": "thinking", "thinking": item.thinking, "signature": item.signature})
                    else:
                        ctx.warn(msg_id, "reasoning", "thinking block without a signature; dropped")
                else:
                    assert not isinstance(item, LLMThinking)
                    blocks.append({"type": "redacted_thinking", "data": item.data})
            if text:
                blocks.append({"type": "text", "text": text})
        else:
            if reasoning:
                ctx.warn(msg_id, "reasoning", UNSIGNED_REASONING_DROPPED)
            blocks = [{"type": "text", "text": text}] if text else []
        for call in msg.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id(call.id),
                    "name": call.name,
                    "input": arguments_object(call, msg_id, ctx),
                }
            )
        if not blocks:
            ctx.warn(msg_id, "assistant", "empty assistant turn; placeholder text sent")
            blocks.append(_text(EMPTY_TURN_PLACEHOLDER))
        return blocks

    def _fold(self, block: JSON, msg: LLMUserMessage, ctx: RequestContext) -> None:
        """Put a tool result's attachments inside its tool_result block (tool results can carry images)."""
        content = block.get("content", "")
        if isinstance(content, str):
            content = block["content"] = [_text(content)] if content else []
        content.extend(self._blocks(msg.content, msg.msg_id, ctx))

    def _blocks(self, parts: Sequence[LLMUserPart], msg_id: str | None, ctx: RequestContext) -> list[JSON]:
        return map_parts(parts, msg_id, ctx, _text, self._media)  # "text content blocks must be non-empty"

    @staticmethod
    def _media(part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        kind = part.kind
        if kind in NO_BLOCK_KINDS:
            return _text(ctx.degrade(part, msg_id, f"Anthropic takes no {kind}"))
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return _text(media)
        media_type = media.media_type
        if kind == "image":
            if media.url is not None:
                if media_type is not None and media_type not in IMAGE_TYPES:
                    return _text(ctx.degrade(part, msg_id, f"image type {media_type} not accepted"))
                return {"type": "image", "source": {"type": "url", "url": media.url}}
            if media_type not in IMAGE_TYPES:
                return _text(ctx.degrade(part, msg_id, f"image type {media_type} not accepted (no transcoder)"))
            return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": media.data}}
        source: JSON
        if media.url is not None:
            if media_type not in (PDF, None):
                return _text(ctx.degrade(part, msg_id, f"document URLs must be PDF, not {media_type}"))
            source = {"type": "url", "url": media.url}
        elif media_type == PDF:
            source = {"type": "base64", "media_type": PDF, "data": media.data}
        elif media_type is not None and media_type.startswith("text/"):
            try:
                text = media.raw_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return _text(ctx.degrade(part, msg_id, "text document is not UTF-8"))
            source = {"type": "text", "media_type": "text/plain", "data": text}
        else:
            return _text(ctx.degrade(part, msg_id, f"documents must be PDF or text, not {media_type}"))
        document: JSON = {"type": "document", "source": source}
        if part.filename:
            document["title"] = part.filename
        return document

    @staticmethod
    def _strip_final_thinking(turn: JSON, ctx: RequestContext) -> None:
        """Thinking off: "an assistant message in the final position cannot contain thinking" (litellm#18926)."""
        kept = [b for b in turn["content"] if b["type"] not in ("thinking", "redacted_thinking")]
        if len(kept) != len(turn["content"]):
            ctx.warn(
                _first_msg_id(turn, ctx),
                "reasoning",
                "thinking is disabled: thinking blocks stripped from the final assistant turn",
            )
            turn["content"] = kept or [_text(EMPTY_TURN_PLACEHOLDER)]


def _text(text: str) -> JSON:
    return {"type": "text", "text": text}


def _tool_result(msg: LLMToolMessage, tool_use_id: str) -> JSON:
    """A tool_result block: one literal per shape, so the common block is built at once, keys in order."""
    content = msg.content
    if msg.is_error:
        if content:
            return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": True}
        return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True}
    if content:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    return {"type": "tool_result", "tool_use_id": tool_use_id}


def _first_msg_id(turn: JSON, ctx: RequestContext) -> str | None:
    tag = ctx.tag_of(turn)
    return tag if isinstance(tag, str) else None


DIALECT = AnthropicDialect()
