"""Traceloupe's error tree.

::

    TraceloupeError
    ├── MisuseError                 the caller's input or use is wrong; fix the input
    │   ├── ContractError (ValueError)   a damaged user/assistant record reached the request
    │   │                                pipeline (the seed's to_llm_request contract, TFROB-299)
    │   ├── InputError              a file or body cannot be read as messages (names file, line, path)
    │   │   └── InputErrors         several of its messages cannot: one InputError each
    │   └── UnknownNameError        an unknown provider, conversation or message id
    └── ProviderError               a provider answered with a failure (status, body) or not at all

The web layer maps this tree to HTTP responses in one place; the CLI prints
``str(error)`` on one line and exits non-zero.
"""

from __future__ import annotations

from collections.abc import Sequence

# The seed's exact contract messages: BaseMessage.to_llm_request raises them for bare user/assistant records.
ASSISTANT_CONTRACT_MESSAGE = "助理消息需要子类实现转换过程"
USER_CONTRACT_MESSAGE = "用户消息需要子类实现转换过程"


class TraceloupeError(Exception):
    """Root of every error Traceloupe raises on purpose."""


class MisuseError(TraceloupeError):
    """The input or the call is wrong; nothing outside the process failed."""


class ContractError(MisuseError, ValueError):
    """A bare BaseMessage with role user or assistant was asked for its LLM form.

    ``str()`` starts with the seed's exact message and then names the record, so the
    error reads the same as in the agent framework and still says which record it was.
    """

    def __init__(self, role: str, msg_id: str) -> None:
        self.role = role
        self.msg_id = msg_id
        self.seed_message = ASSISTANT_CONTRACT_MESSAGE if role == "assistant" else USER_CONTRACT_MESSAGE
        super().__init__(f"{self.seed_message} (msg_id={msg_id}, role={role})")

    @property
    def explanation(self) -> str:
        """The same in English, with the way out: the seed's message alone does not say what to do."""
        return (
            f"the {self.role} record {self.msg_id} has no msg_type, so its message class is unknown and it cannot "
            f'become a request (a hand-written {self.role} record needs one, e.g. "msg_type": "text"); '
            "`traceloupe check FILE` lists such records and `traceloupe repair FILE -o OUT` infers their type"
        )


class InputError(MisuseError):
    """Input that cannot be read as messages; the message names the file, the line and the JSON path."""

    def __init__(self, reason: str, *, source: str = "<input>", line: int | None = None, path: str | None = None):
        self.reason = reason
        self.source = source
        self.line = line
        self.path = path
        where = source if line is None else f"{source}:{line}"
        at = f" at {_shorten(path)}" if path else ""
        super().__init__(f"{where}{at}: {reason}")


class InputErrors(InputError):
    """Several messages of one input that cannot be read, each an InputError of its own (``errors``, in file order).

    ``str()`` is one line per error and a last line counting them; its file, line and path are the first's.
    ``stopped``: there were so many that reading stopped after the last one.
    """

    def __init__(self, errors: Sequence[InputError], *, stopped: bool = False) -> None:
        first = errors[0]
        super().__init__(first.reason, source=first.source, line=first.line, path=first.path)
        self.errors = tuple(errors)
        self.stopped = stopped
        unit = "line" if all(e.line is not None for e in errors) else "message"
        count = f"{len(errors)} bad {unit}{'s' * (len(errors) != 1)}"
        self.args = ("\n".join([*map(str, errors), f"{first.source}: {count}{', reading stopped there' * stopped}"]),)


class UnknownNameError(MisuseError, LookupError):
    """A name (provider, conversation, message id) that does not exist; lists the known ones when short."""


class ProviderError(TraceloupeError):
    """A provider failed: an HTTP status with a body, a timeout, or an answer that cannot be read."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        self.status = status
        self.body = body
        super().__init__(message)


# A path spells the file's own keys: a control character in one (a newline, an escape sequence) is written as its
# escape, so an error is one line and a terminal shows it as text.
_CONTROL_ESCAPES = {c: f"\\u{c:04x}" for c in (*range(0x20), *range(0x7F, 0xA0))}


def _shorten(path: str, limit: int = 160) -> str:
    """Keep a JSON path readable on one line (control characters escaped): a very deep one keeps its head and its
    tail."""
    path = path.translate(_CONTROL_ESCAPES)
    if len(path) <= limit:
        return path
    return f"{path[:60]}…{path[-(limit - 61) :]}"
