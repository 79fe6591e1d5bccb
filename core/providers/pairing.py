"""Phase 4, ``to_list``: flatten what ``to_llm_request`` returned and merge it into one well-formed list.

Every provider requires the same thing of tool calls, so it is settled once, here, not per dialect:

* legacy ``function_call`` / ``function`` pairs become tool calls with a synthesised id
  (docs/providers.md section 1: "convert legacy -> modern by synthesising ids");
* each assistant turn with tool calls is followed directly by exactly one tool result per call,
  in call order (pydantic/pydantic-ai#741), before anything else; console output, system text and result attachments
  that arrived inside the tool block are kept and placed after the results;
* a result with no call id is paired by position with the first unanswered call (with a warning);
* an unanswered call gets a synthesised error result (interrupted runs: BerriAI/litellm#19061), with a warning;
* a result whose call is not in the open block (an orphan) is dropped, with a warning naming it;
  its attachments stay, as a plain user turn;
* a result takes the name of the call it answers (Gemini's ``functionResponse.name`` must be the call's name,
  docs/providers.md section 4); a result that named another tool is noted;
* assistant records that make calls one after another before any result comes (a streamed or parallel agent
  writes one record per call) share one tool block: every real result reaches its call, and the dialects
  see the records side by side, to send as one turn where their provider needs one;
* a call id that an earlier turn of the request already used is renamed (``call_0`` -> ``call_0_2``), and
  the results and attachments of its turn that name it follow, with a warning: providers reject a request
  that repeats one (OpenAI "Duplicate value for 'tool_call_id'", Anthropic "tool_use ids must be unique"),
  and agents that number their calls per reply repeat ``call_0`` in every turn.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from core.llm.messages import (
    LLMAssistantMessage,
    LLMFunctionMessage,
    LLMMessage,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
)
from core.providers.base import UNANSWERED_CALL_TEXT, RequestContext

LEGACY_CALL_PREFIX = "call_fn_"
SYNTHETIC_CALL_PREFIX = "call_auto_"


class _Step:
    """The open tool calls: those of one assistant record, or of several written one after another before any
    result came (one list, extended in place, so a long run of such records costs a copy of none)."""

    __slots__ = ("calls", "legacy", "msg_id")

    def __init__(self, turn: LLMAssistantMessage) -> None:
        self.calls = list(turn.tool_calls)
        self.msg_id = turn.msg_id
        # The id of the call that came from a legacy function_call (_modernise puts it last).
        self.legacy = self.calls[-1].id if turn.function_call is not None else None


class _Block:
    """The bookkeeping of one step's tool calls, made once its results stop arriving in call order.

    ``emitted`` results (a prefix of the calls, in order) were already placed in the output as they
    arrived; ``results`` holds those and every later one, by call id.
    """

    __slots__ = ("calls", "deferred", "emitted", "legacy", "msg_id", "results")

    def __init__(self, turn: _Step, emitted: list[LLMMessage]) -> None:
        self.calls = turn.calls
        self.msg_id = turn.msg_id
        self.legacy = turn.legacy
        self.emitted = len(emitted)
        self.results: dict[str, LLMToolMessage] = {
            call.id: result for call, result in zip(self.calls, emitted, strict=False) if type(result) is LLMToolMessage
        }
        self.deferred: list[LLMMessage] | None = None  # made when something is deferred (rare)

    def defer(self, msg: LLMMessage) -> None:
        """Keep a message that arrived inside the block for after its results."""
        if self.deferred is None:
            self.deferred = []
        self.deferred.append(msg)


def to_list(formatted: Iterable[LLMMessage | list[LLMMessage]], ctx: RequestContext) -> list[LLMMessage]:
    """Flatten and merge the neutral messages into the list every dialect starts from.

    The common case costs next to nothing: while an assistant turn's results arrive complete, named
    and in call order, each goes straight to the output. The first one that does not (out of order,
    unnamed, unknown, a second one, a legacy result, something to defer) opens a :class:`_Block`
    holding what was placed so far, and the block settles the turn by the rules above.
    """
    merge = _Merge(ctx)
    place = merge.place
    for item in formatted:
        if isinstance(item, list):
            for msg in item:
                place(msg)
        else:
            place(item)
    return merge.finish()


class _Merge:
    """The state of one ``to_list`` pass, and one named step per kind of message it meets."""

    __slots__ = ("answered", "block", "ctx", "kept", "named", "out", "renamed", "synthetic", "turn", "used")

    def __init__(self, ctx: RequestContext) -> None:
        self.ctx = ctx
        self.out: list[LLMMessage] = []
        self.turn: _Step | None = None  # the calls that are open
        self.answered = 0  # how many of its results were placed in call order, without a block
        self.block: _Block | None = None  # the open turn's bookkeeping, once it needs some
        self.synthetic = 0
        # The call id the last result named ("" for none; None when the last message was no result) and the one
        # it was kept under (None: dropped), so the attachments that follow it stay with it, move with a
        # positional pairing, or become a plain user turn.
        self.named: str | None = None
        self.kept: str | None = None
        self.used: set[str] = set()  # every call id of the output so far
        self.renamed: dict[str, str] = {}  # the open turn's repeated call ids -> the ids they were renamed to

    def place(self, msg: LLMMessage) -> None:
        """Place one message: a result, an assistant turn, a legacy result, or anything else."""
        named = self.named
        if named is not None:  # the last message was a result: an attachment of it follows where it was kept
            self.named = None
            if type(msg) is LLMUserMessage and msg.attachment_of == named and self.kept != named:
                follows = self._follow_result(msg)
                if follows is None:
                    return
                msg = follows
        # Exact types, hot cases first: a trace is mostly assistant turns and tool results.
        if type(msg) is LLMToolMessage:
            self._result(msg)
        elif type(msg) is LLMAssistantMessage:
            self._assistant(msg)
        elif type(msg) is LLMFunctionMessage:
            self._legacy_result(msg)
        elif self.turn is None:
            self._outside_step(msg)
        else:
            self._inside_step(msg)

    def finish(self) -> list[LLMMessage]:
        """Settle the step still open and return the merged list."""
        if self.turn is not None:
            _settle(self.turn, self.answered, self.block, self.out, self.ctx)
        return self.out

    def _follow_result(self, msg: LLMUserMessage) -> LLMUserMessage | None:
        """An attachment of the result just placed, which was kept under another id (or dropped), names that id;
        when the result was dropped from a block, the attachment waits for the block's end as a plain user turn
        (None: deferred)."""
        kept = self.kept
        msg = replace(msg, attachment_of=kept)
        if kept is None and self.block is not None:
            self.block.defer(msg)
            return None
        return msg

    def _result(self, msg: LLMToolMessage) -> None:
        """A tool result: straight to the output when it answers the next call in order, else to the block."""
        named = call_id = msg.tool_call_id
        renamed = self.renamed
        if renamed and call_id in renamed:
            call_id = renamed[call_id]
            msg = replace(msg, tool_call_id=call_id)
        turn = self.turn
        if self.block is None and turn is not None:
            calls = turn.calls
            answered = self.answered
            if answered < len(calls) and call_id and calls[answered].id == call_id and msg.name == calls[answered].name:
                self.out.append(msg)  # the next call's result: placed as it comes
                self.answered = answered + 1
                self.named, self.kept = named, call_id
                return
            self.block = self._open_block(turn)
        self.named, self.kept = named or "", _answer(self.block, msg, self.ctx)

    def _assistant(self, msg: LLMAssistantMessage) -> None:
        """An assistant turn: it joins the open step's calls, or settles that step and opens its own."""
        turn = self.turn
        joins = turn is not None and _joins(turn, self.answered, self.block, msg)
        if turn is not None and not joins:
            if self.block is not None or self.answered != len(turn.calls):  # else nothing to settle (no call)
                _settle(turn, self.answered, self.block, self.out, self.ctx)
            self.block = None
        made = msg.tool_calls
        if self.renamed and not joins:
            self.renamed = {}
        if len(made) == 1 and (call_id := made[0].id) and call_id not in self.used and msg.function_call is None:
            self.used.add(call_id)  # the usual turn: one call with an id of its own
        elif made or msg.function_call is not None:
            msg, self.synthetic = _modernise(msg, self.synthetic, self.used, self.renamed, self.ctx)
        self.out.append(msg)
        if joins:
            assert turn is not None
            turn.calls.extend(msg.tool_calls)  # one block for both records
        else:
            self.turn = _Step(msg) if msg.tool_calls else None
            self.answered = 0

    def _legacy_result(self, msg: LLMFunctionMessage) -> None:
        """A legacy function result: always through the block (legacy calls pair by position)."""
        if self.block is None and self.turn is not None:
            self.block = self._open_block(self.turn)
        _answer_legacy(self.block, msg, self.ctx)

    def _outside_step(self, msg: LLMMessage) -> None:
        """Anything else while no call is open: placed as it is (an orphan result's attachments as a user turn)."""
        if type(msg) is LLMUserMessage and msg.attachment_of not in (None, "console"):
            msg = replace(msg, attachment_of=None)  # the attachments of a dropped (orphan) result
        self.out.append(msg)

    def _inside_step(self, msg: LLMMessage) -> None:
        """Anything else while calls are open: a user turn settles the step; other output waits for its results."""
        assert self.turn is not None
        if type(msg) is not LLMUserMessage or msg.attachment_of is not None:
            if self.block is None:
                self.block = self._open_block(self.turn)
            self.block.defer(msg)  # output that arrived inside the tool block goes after its results
            return
        _settle(self.turn, self.answered, self.block, self.out, self.ctx)
        self.turn, self.block = None, None
        self.out.append(msg)

    def _open_block(self, turn: _Step) -> _Block:
        """The open step's block, holding the results already placed in order."""
        out = self.out
        return _Block(turn, out[len(out) - self.answered :])


def _joins(turn: _Step, answered: int, block: _Block | None, msg: LLMAssistantMessage) -> bool:
    """Whether ``msg`` makes more calls of the open turn's tool block: it calls tools and nothing came between
    (no result, nothing deferred). Legacy function calls pair by position, so they never join."""
    return (
        answered == 0 and block is None and bool(msg.tool_calls) and msg.function_call is None and turn.legacy is None
    )


def _settle(turn: _Step, answered: int, block: _Block | None, out: list[LLMMessage], ctx: RequestContext) -> None:
    """Close the open step: nothing to do when every call was answered in order, else its block's rules."""
    if block is None:
        if answered == len(turn.calls):
            return
        block = _Block(turn, out[len(out) - answered :])
    _close(block, out, ctx)


def _modernise(
    msg: LLMAssistantMessage, synthetic: int, used: set[str], renamed: dict[str, str], ctx: RequestContext
) -> tuple[LLMAssistantMessage, int]:
    """Give every call a usable id that no other call of the request has, and turn a legacy function_call into
    one more tool call; the ids given are added to ``used``.

    A missing id, or one the turn already has, becomes a synthetic id (results cannot tell such calls apart:
    they pair by position or are dropped as second results). An id an earlier turn used is renamed to the
    first free ``<id>_<n>`` and recorded in ``renamed``, so the results that name it follow it.
    """
    calls = msg.tool_calls
    seen: set[str] = set()
    fixed: list[LLMToolCall] | None = None
    for i, call in enumerate(calls):
        new: str | None = None
        if not call.id or call.id in seen:
            synthetic += 1
            new = _free_id(f"{SYNTHETIC_CALL_PREFIX}{synthetic}", used)
        elif call.id in used:
            new = renamed[call.id] = _free_id(call.id, used)
            ctx.warn(
                msg.msg_id,
                "tool_call",
                f"call id {call.id!r} was already used by an earlier call of this history (providers reject a "
                f"repeated tool call id); sent as {new}",
            )
        if new is not None:
            fixed = fixed if fixed is not None else list(calls)
            fixed[i] = replace(call, id=new)
        seen.add(call.id)  # as the model wrote it: a second call_0 in one turn is a duplicate, renamed or not
        used.add(new or call.id)
    if msg.function_call is not None:
        fixed = fixed if fixed is not None else list(calls)
        synthetic += 1
        fn = msg.function_call
        legacy_id = _free_id(f"{LEGACY_CALL_PREFIX}{synthetic}", used)
        used.add(legacy_id)
        fixed.append(LLMToolCall(id=legacy_id, name=fn.name, arguments=fn.arguments))
    if fixed is None:
        return msg, synthetic
    return replace(msg, tool_calls=tuple(fixed)), synthetic


def _free_id(call_id: str, used: set[str]) -> str:
    """``call_id`` when no call of the request has it yet, else the first ``<call_id>_<n>`` (n >= 2) none has."""
    if call_id not in used:
        return call_id
    n = 2
    while f"{call_id}_{n}" in used:
        n += 1
    return f"{call_id}_{n}"


def _answer(block: _Block | None, msg: LLMToolMessage, ctx: RequestContext) -> str | None:
    """Keep a result in its block; returns the call id it answers, or None when it was dropped (warned)."""
    if block is None:
        ctx.warn(msg.msg_id, "tool_result", f"result for call {msg.tool_call_id!r} follows no tool call; dropped")
        return None
    call_id = msg.tool_call_id
    if not call_id:
        call = next((c for c in block.calls if c.id not in block.results), None)
        if call is None:
            ctx.warn(msg.msg_id, "tool_result", "result names no call and every call is answered; dropped")
            return None
        ctx.warn(msg.msg_id, "tool_result", f"result names no call; paired by position with call {call.id}")
        msg = replace(msg, tool_call_id=call.id, name=call.name)
        block.results[call.id] = msg
        return call.id
    for call in block.calls:
        if call.id == call_id:
            break
    else:
        ctx.warn(
            msg.msg_id,
            "tool_result",
            f"result for call {call_id!r}, which the preceding assistant turn did not make; dropped",
        )
        return None
    if call_id in block.results:
        ctx.warn(msg.msg_id, "tool_result", f"second result for call {call_id!r}; dropped")
        return None
    if msg.name != call.name:
        if msg.name:
            ctx.warn(
                msg.msg_id,
                "tool_result",
                f"result for call {call_id!r} names tool {msg.name!r}, but the call was to {call.name!r}; "
                "sent under the call's name",
            )
        msg = replace(msg, name=call.name)
    block.results[call_id] = msg
    return call_id


def _answer_legacy(block: _Block | None, msg: LLMFunctionMessage, ctx: RequestContext) -> None:
    """A legacy function result answers the block's legacy call (legacy calls have no ids: pair by position)."""
    if block is None or block.legacy is None or block.legacy in block.results:
        ctx.warn(msg.msg_id, "function_result", f"result of function {msg.name!r} follows no function call; dropped")
        return
    call = next(c for c in block.calls if c.id == block.legacy)
    block.results[call.id] = LLMToolMessage(
        content=msg.content, tool_call_id=call.id, name=call.name, msg_id=msg.msg_id
    )


def _close(block: _Block, out: list[LLMMessage], ctx: RequestContext) -> None:
    """Emit the block's results in call order (synthesising the missing ones), then what was deferred."""
    results = block.results
    for call in block.calls[block.emitted :]:
        result = results.get(call.id)
        if result is None:
            ctx.warn(
                block.msg_id, "tool_call", f"call {call.id} ({call.name}) was never answered; an error result was added"
            )
            result = LLMToolMessage(content=UNANSWERED_CALL_TEXT, tool_call_id=call.id, name=call.name, is_error=True)
        out.append(result)
    for msg in block.deferred or ():
        if type(msg) is LLMUserMessage and msg.attachment_of not in results and msg.attachment_of != "console":
            msg = replace(msg, attachment_of=None)
        out.append(msg)
