"""Every path of the dashboard, built in one place; ids from a trace travel in a path through one encoding.

A stored id can be any string: ``a/b?c=d#e``, ``..``, ``%2F``, spaces, RTL marks, a URL. Percent-encoding
cannot carry all of them: the server decodes ``%2F`` to ``/`` before routing (the ASGI ``path`` is
decoded) and browsers resolve ``.`` and ``..`` segments, ``%2e%2e`` included. So a path segment is the
id's UTF-8 bytes with ``~XX`` escapes: ASCII letters, digits, ``-``, ``_`` and ``.`` stay as they are (a
plain id such as ``demo-email`` reads as itself), every other byte, ``~`` itself and a leading ``.``
are escaped. The result holds only characters that no server or browser rewrites, and
:func:`from_segment` gives the id back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote, urlencode

from litestar.exceptions import NotFoundException
from litestar.params import PathParameter

_KEPT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
_ESCAPE = re.compile(r"~(?:([0-9A-Fa-f]{2})|)")
_DRIVE = re.compile(r"^[A-Za-z]:")

SEGMENT_RULE = (
    "Ids in a path are UTF-8 with `~XX` escapes: letters, digits, `-`, `_` and `.` as they are, "
    "any other byte, `~` and a leading `.` as `~` and two hex digits (`a/b` is `a~2Fb`)."
)
"""The encoding in a sentence, for the API schema's parameter descriptions."""

PathId = Annotated[str, PathParameter(description=SEGMENT_RULE)]
"""A path parameter that carries an id: handlers read it through :func:`from_segment`."""


def segment(value: str) -> str:
    """``value`` as one path segment that every server and browser passes through unchanged."""
    raw = value.encode("utf-8", "surrogatepass")
    out = [chr(b) if b in _KEPT and not (i == 0 and b == 0x2E) else f"~{b:02X}" for i, b in enumerate(raw)]
    return "".join(out)


def from_segment(text: str) -> str:
    """The id a path segment names (404 when it is not an encoding of one).

    No stored id holds a lone surrogate (UTF-8 cannot encode one, so neither backend can store it) or U+0000
    (PostgreSQL cannot, and both backends keep the same rules for what a path may name): such a path names
    nothing, and this is the one place ids are decoded, so every route answers 404 for it.

    Characters outside the escape are taken as they are, so a link written with percent-encoding
    before this encoding existed still opens when its id has no ``/``.
    """
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(text):
        if match.group(1) is None:
            raise NotFoundException("A '~' in a path must be followed by two hex digits.")
        out += text[pos : match.start()].encode("utf-8", "surrogatepass")
        out.append(int(match.group(1), 16))
        pos = match.end()
    out += text[pos:].encode("utf-8", "surrogatepass")
    try:
        value = out.decode("utf-8")
    except UnicodeDecodeError:
        raise NotFoundException("The id in this path is not valid UTF-8.") from None
    if "\x00" in value:
        raise NotFoundException("The id in this path holds U+0000, which no stored id holds.")
    return value


def query(**params: str | None) -> str:
    """``?k=v&...`` of the parameters that have a value ('' when none has)."""
    kept = {k: v for k, v in params.items() if v}
    return "?" + urlencode(kept) if kept else ""


def with_query(url: str, pairs: Sequence[tuple[str, str]]) -> str:
    """``url`` with ``pairs`` added to its query (the request options a page keeps in its links)."""
    if not pairs:
        return url
    return url + ("&" if "?" in url else "?") + urlencode(list(pairs))


def _flag(on: bool) -> str | None:
    return "1" if on else None


# Pages that take no id: the same in a route decorator, a template link and a test.

INDEX = "/"
IMPORT = "/import"
OTLP_TRACES = "/v1/traces"
"""OTLP/HTTP trace export (the path an exporter appends to ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""
CHECK = "/check"
SUITES = "/suites"
SCHEMA = "/schema"
API_DOCS = "/api-docs"
STATIC = "/static"
ATTACHMENTS = "/attachments/"
LOGIN = "/login"
LOGOUT = "/logout"
AUDIT = "/admin/audit"


@dataclass(frozen=True, slots=True)
class SitePaths:
    """The fixed paths, as templates read them (``paths.upload``): the nav bar, forms and empty-state links."""

    index: str = INDEX
    upload: str = IMPORT
    check: str = CHECK
    schema: str = SCHEMA
    api_docs: str = API_DOCS
    suites: str = SUITES
    login: str = LOGIN
    logout: str = LOGOUT
    audit: str = AUDIT


# Pages of one conversation.


def conversation(conversation_id: str) -> str:
    """``/conversations/<id>``: the timeline."""
    return f"/conversations/{segment(conversation_id)}"


def seek(conversation_id: str, what: str, *, after: str | None = None) -> str:
    """The next damaged record, error or divergence past the card ``after``: a redirect to its page."""
    return f"{conversation(conversation_id)}/seek{query(what=what, after=after)}"


def payload(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """The payload page of ``provider`` (for the request that produced ``upto``, for ``model``, when given)."""
    base = f"{conversation(conversation_id)}/payload/{segment(provider)}"
    return base + query(upto=upto, repair=_flag(repair), model=model)


def phases(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """The assembly phases of a payload."""
    base = f"{conversation(conversation_id)}/payload/{segment(provider)}/phases"
    return base + query(upto=upto, repair=_flag(repair), model=model)


def _payload_part(
    part: str, conversation_id: str, provider: str, upto: str | None, repair: bool, model: str | None, **extra: str
) -> str:
    base = f"{conversation(conversation_id)}/payload/{segment(provider)}/{part}"
    return base + query(**extra, upto=upto, repair=_flag(repair), model=model)


def payload_window(
    conversation_id: str,
    provider: str,
    n: int,
    *,
    upto: str | None = None,
    repair: bool = False,
    model: str | None = None,
) -> str:
    """Window ``n`` of a payload's highlighted body: an HTML fragment (``web.bodies.windows``)."""
    return _payload_part("window", conversation_id, provider, upto, repair, model, n=str(n))


def payload_windows_map(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """Every card anchor of a payload -> the window holding the first line of its part, as JSON."""
    return _payload_part("windows", conversation_id, provider, upto, repair, model)


def payload_preparing(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """How far the payload page's digest is made: the panel that polls it, or a refresh once it is ready."""
    return _payload_part("preparing", conversation_id, provider, upto, repair, model)


def payload_download(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """A payload's whole body, pretty-printed as on the page, streamed as a JSON file."""
    return _payload_part("body.json", conversation_id, provider, upto, repair, model)


def diff(
    conversation_id: str,
    left: str | None = None,
    right: str | None = None,
    *,
    upto: str | None = None,
    repair: bool = False,
) -> str:
    """The diff page of two providers' bodies (without a query when no side is given: a form's action)."""
    return f"{conversation(conversation_id)}/diff{query(left=left, right=right, upto=upto, repair=_flag(repair))}"


def diff_window(
    conversation_id: str, left: str, right: str, side: str, n: int, *, upto: str | None = None, repair: bool = False
) -> str:
    """Window ``n`` of one side's body on the diff page, its changes marked: an HTML fragment."""
    base = f"{conversation(conversation_id)}/diff/window"
    return base + query(left=left, right=right, side=side, n=str(n), upto=upto, repair=_flag(repair))


def diff_preparing(
    conversation_id: str, left: str, right: str, *, upto: str | None = None, repair: bool = False
) -> str:
    """How far the diff page's digest is made: the panel that polls it, or a refresh once it is ready."""
    base = f"{conversation(conversation_id)}/diff/preparing"
    return base + query(left=left, right=right, upto=upto, repair=_flag(repair))


def diff_changes(
    conversation_id: str,
    left: str,
    right: str,
    cause: str,
    offset: int,
    *,
    upto: str | None = None,
    repair: bool = False,
) -> str:
    """The next changes of one cause on the diff page, from ``offset``: an HTML fragment of list items."""
    base = f"{conversation(conversation_id)}/diff/changes"
    return base + query(left=left, right=right, cause=cause, offset=str(offset), upto=upto, repair=_flag(repair))


def replays(conversation_id: str) -> str:
    """Every run of a conversation."""
    return f"{conversation(conversation_id)}/replays"


def run_start(conversation_id: str) -> str:
    """Where a Re-run form posts."""
    return f"{conversation(conversation_id)}/runs"


def step_run_start(conversation_id: str) -> str:
    """Where a Replay steps form posts."""
    return f"{conversation(conversation_id)}/step-runs"


def record(conversation_id: str, anchor: str) -> str:
    """The conversation page that holds the card ``anchor`` (``msg-<id>``), opened at it."""
    return f"{conversation(conversation_id)}{query(at=anchor)}#{anchor}"


def record_field(conversation_id: str, msg_id: str, field: str) -> str:
    """The whole value of one field of one record (``field``: its key on the card, a JSON pointer)."""
    return f"{conversation(conversation_id)}/records/{segment(msg_id)}/field{query(pointer=field)}"


# Runs.


def run(run_id: str) -> str:
    """A run's page."""
    return f"/runs/{segment(run_id)}"


RUNS_COMPARE = "/runs/compare"
RUNS_COMPARE_REQUESTS = "/runs/compare/requests"


def runs_compare_requests(a: str, b: str) -> str:
    """The diff of two runs' request bodies (the compare page loads it after the page)."""
    return f"{RUNS_COMPARE_REQUESTS}{query(a=a, b=b)}"


def runs_compare(a: str, b: str) -> str:
    """Two runs (or two step runs) side by side."""
    return f"{RUNS_COMPARE}{query(a=a, b=b)}"


def step_run(run_id: str, *, at: int | None = None) -> str:
    """A step run's page; ``at``: the step it opens at (highlighted, scrolled to)."""
    base = f"/step-runs/{segment(run_id)}"
    return f"{base}{query(at=str(at))}#step-{at}" if at is not None else base


# The JSON API.


def api_conversation(conversation_id: str) -> str:
    """A conversation's messages as JSON."""
    return f"/api{conversation(conversation_id)}"


def api_payload(
    conversation_id: str, provider: str, *, upto: str | None = None, repair: bool = False, model: str | None = None
) -> str:
    """The payload as JSON."""
    return "/api" + payload(conversation_id, provider, upto=upto, repair=repair, model=model)


def api_diff(conversation_id: str, left: str, right: str, *, upto: str | None = None, repair: bool = False) -> str:
    """The diff as JSON."""
    return "/api" + diff(conversation_id, left, right, upto=upto, repair=repair)


def api_runs(conversation_id: str) -> str:
    """A conversation's runs as JSON."""
    return f"/api{conversation(conversation_id)}/runs"


def api_record_field(conversation_id: str, msg_id: str, field: str) -> str:
    """The whole value of one field of one record, as JSON."""
    return "/api" + record_field(conversation_id, msg_id, field)


def secrets(conversation_id: str) -> str:
    """The prefix of a conversation's secret reveals: a masked value's digest follows it."""
    return f"/api{conversation(conversation_id)}/secrets/"


def api_run(run_id: str) -> str:
    """A run as JSON."""
    return f"/api{run(run_id)}"


def api_step_run(run_id: str) -> str:
    """A step run as JSON (the fields of ``traceloupe replay --steps --json``)."""
    return f"/api/step-runs/{segment(run_id)}"


def checked_relative(path: str) -> str | None:
    """``path`` when it is a plain relative path (no dot segments, not absolute), else None."""
    if not path or len(path) > 4096 or "\x00" in path or "\\" in path:
        return None
    if path.startswith(("/", "~")) or _DRIVE.match(path):
        return None
    if any(part in ("", ".", "..") for part in path.split("/")):
        return None
    return path


def attachment(path: str) -> str | None:
    """``/attachments/<path>`` for a trace path, when it is plain and relative; whether the file exists is decided
    on request (``web.attachments.files``)."""
    checked = checked_relative(path)
    return None if checked is None else ATTACHMENTS + quote(checked)


# Suites: named sets of conversations replayed in bulk (``core.suites``).


def suite(name: str) -> str:
    """A suite's page: its conversations, its runs and the form that starts one."""
    return f"{SUITES}/{segment(name)}"


def suite_run_start(name: str) -> str:
    """Where a suite's Run form posts."""
    return f"{suite(name)}/runs"


def suite_run(run_id: str, *, sort: str | None = None, order: str | None = None, outcome: str | None = None) -> str:
    """A suite run's page: progress, outcomes (sorted and filtered by the query) and regressions."""
    return f"/suite-runs/{segment(run_id)}{query(sort=sort, order=order, outcome=outcome)}"


def suite_progress(run_id: str) -> str:
    """A suite run's live progress region (htmx polls it while the run goes on)."""
    return f"/suite-runs/{segment(run_id)}/progress"


def api_suite_run(run_id: str) -> str:
    """A suite run's report as JSON (what ``traceloupe suite run --json`` prints)."""
    return f"/api{suite_run(run_id)}"


class ConversationLinks:
    """The links every page or region about one conversation offers, for a class that has its ``conversation_id``."""

    __slots__ = ()
    if TYPE_CHECKING:

        @property
        def conversation_id(self) -> str: ...

    @property
    def conversation_url(self) -> str:
        return conversation(self.conversation_id)

    @property
    def replays_url(self) -> str:
        return replays(self.conversation_id)

    @property
    def secrets_url(self) -> str:
        return secrets(self.conversation_id)
