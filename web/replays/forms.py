"""The replay forms of a page: Re-run (one reply) and Replay steps (one turn), each post with a fresh key.

Every page that offers a replay (the conversation, the payload page, the runs page, a suite) renders these;
which cards are turns is read from the timeline's slots, so no message is typed to decide where a control goes.
A turn is a top-level user message with trace records (``core.replay.turns``).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from core.providers.dialects import DEFAULT_PROVIDER
from web import urls
from web.replays.service import ProviderChoice
from web.request_options import AskedOptions, OptionsForm, options_form
from web.timeline import Timeline


@dataclass(frozen=True, slots=True)
class ReplayForm:
    """What every replay form offers: where it posts, the providers to pick from, the one picked, a fresh key.

    The Re-run, Replay steps and suite Run forms add their own fields; ``fresh`` makes any of them.
    """

    action: str
    providers: Sequence[ProviderChoice]
    selected: str
    model: str
    idempotency_key: str

    @classmethod
    def fresh(cls, action: str, choices: Sequence[ProviderChoice], **fields: Any) -> Self:
        """A new form (a new key on every render: each press is a new run) opening on ``preselected``'s choice."""
        selected, model = preselected(choices)
        return cls(action, choices, selected, model, secrets.token_urlsafe(18), **fields)

    @property
    def any_available(self) -> bool:
        return any(p.available for p in self.providers)

    @property
    def options(self) -> OptionsForm:
        """The request option fields (``web.request_options``), blank: the recorded request's values are sent."""
        return BLANK_OPTIONS


BLANK_OPTIONS = options_form(AskedOptions())


@dataclass(frozen=True, slots=True)
class RerunForm(ReplayForm):
    """The Re-run control: a replay form for the reply up to ``upto`` (the final one when None)."""

    kind: ClassVar[str] = "reply"
    submit_label: ClassVar[str] = "Re-run"

    conversation_id: str
    upto: str | None
    enabled: bool = True
    reason: str = ""

    @property
    def hidden(self) -> tuple[tuple[str, str], ...]:
        """The form's hidden fields besides the token and the key."""
        return (("upto", self.upto),) if self.upto else ()


@dataclass(frozen=True, slots=True)
class RerunForms:
    """The Re-run forms of one page: one per control, each with a fresh idempotency key."""

    conversation_id: str
    choices: Sequence[ProviderChoice]

    def form(self, upto: str | None = None) -> RerunForm:
        return rerun_form(self.choices, self.conversation_id, upto)


def rerun_form(choices: Sequence[ProviderChoice], conversation_id: str, upto: str | None = None) -> RerunForm:
    """A new form (new key on every render)."""
    return RerunForm.fresh(urls.run_start(conversation_id), choices, conversation_id=conversation_id, upto=upto)


def preselected(choices: Sequence[ProviderChoice]) -> tuple[str, str]:
    """The provider and model a replay form opens with: the default provider when its key is set, else the first
    provider whose key is set, else the first."""
    ready = sorted((c for c in choices if c.available), key=lambda c: c.provider != DEFAULT_PROVIDER)
    first = ready[0] if ready else (choices[0] if choices else None)
    return (first.provider, first.default_model) if first else ("", "")


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
    turns = timeline.order.turns()
    return StepForms(conversation_id, choices, frozenset(turns), turns[-1] if turns else None)
