"""A call's resent history recognised by comparison with the last call of its key, never taken when it differs."""

from __future__ import annotations

from core.formats.resent import Resent
from core.llm.messages import LLMAssistantMessage, LLMSystemMessage, LLMTextPart, LLMUserMessage

SYSTEM = LLMSystemMessage("You book trips.")
USER = LLMUserMessage((LLMTextPart("A table for two?"),))
ANSWER = LLMAssistantMessage("Booked.")
AGAIN = LLMUserMessage((LLMTextPart("And for three?"),))


def _remembered() -> Resent[object, str]:
    resent: Resent[object, str] = Resent()
    resent.remember("t1", (SYSTEM, USER), (ANSWER,), ("s", "u", "a"))
    return resent


def test_a_call_that_resends_the_last_calls_messages_shares_what_was_made_for_them() -> None:
    resent = _remembered()
    assert resent.start("t1", (SYSTEM, USER, ANSWER, AGAIN)) == (3, ("s", "u", "a"))
    copy = (LLMSystemMessage("You book trips."), LLMUserMessage((LLMTextPart("A table for two?"),)), ANSWER)
    assert resent.start("t1", copy) == (3, ("s", "u", "a"))  # equal, if not the same objects


def test_a_retry_shares_what_the_last_call_sent_and_nothing_else() -> None:
    resent = _remembered()
    assert resent.start("t1", (SYSTEM, USER)) == (2, ("s", "u"))
    assert resent.start("t1", (SYSTEM, USER, AGAIN)) == (2, ("s", "u"))


def test_other_messages_or_another_key_share_nothing() -> None:
    resent = _remembered()
    assert resent.start("t1", (SYSTEM, AGAIN, ANSWER)) == (0, ())
    assert resent.start("t1", (SYSTEM,)) == (0, ())
    assert resent.start("t2", (SYSTEM, USER, ANSWER)) == (0, ())
    resent.remember("t1", (SYSTEM,), ())
    assert resent.start("t1", (SYSTEM, USER)) == (1, ())  # nothing remembered as made
