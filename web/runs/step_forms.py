"""The Replay steps controls: one form per user card that has trace records, and one for the conversation's last turn.

A turn is a top-level user message with trace records (``core.replay.turns``); which cards are
turns is read from the timeline's slots, so no message is typed to decide where a control goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from web import urls
from web.replays.service import ProviderChoice
from web.runs.views import ReplayForm
from web.timeline import Timeline


@dataclass(frozen=True, slots=True)
class StepForm(ReplayForm):
    """A Replay steps form: a replay form for one turn; its limits are the reader's."""

    kind: ClassVar[str] = "steps"
    submit_label: ClassVar[str] = "Replay steps"

    turn: str

    @property
    def hidden(self) -> tuple[tuple[str, str], ...]:
        """The form's hidden fields besides the token and the key."""
        return (("turn", self.turn),)


@dataclass(frozen=True, slots=True)
class StepForms:
    """The Replay steps forms of one page: ``turns`` are the user messages (msg_id) that have trace records."""

    conversation_id: str
    choices: Sequence[ProviderChoice]
    turns: frozenset[str]
    last_turn: str | None

    def form(self, turn: str | None = None) -> StepForm | None:
        """A new form (new key) for ``turn``, or the last turn; None when that message is not a turn."""
        turn = self.last_turn if turn is None else turn
        if turn is None or turn not in self.turns:
            return None
        return StepForm.fresh(urls.step_run_start(self.conversation_id), self.choices, turn=turn)


def step_forms(conversation_id: str, choices: Sequence[ProviderChoice], timeline: Timeline) -> StepForms:
    """The forms of a conversation page: a turn is a top-level user card whose trace records follow or precede it."""
    slots = timeline.slots
    users = [s.msg_id for s in slots if s.role == "user" and s.placement == "message" and s.depth == 0]
    parents = {s.parent_id for s in slots if s.parent_id is not None}
    turns = [u for u in users if u in parents]
    return StepForms(conversation_id, choices, frozenset(turns), turns[-1] if turns else None)
