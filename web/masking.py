"""Secrets inside trace text, masked wherever the dashboard shows it; the stored data is never changed.

An imported trace can hold keys its agent saw: an ``sk-`` key in a tool result, an
``Authorization: Bearer`` header in a logged request, an AWS access key in a console
dump. Pages and the API show each one as ``<prefix>…[masked <kind> #<digest>]``; the
digest (a hash, not the key) names the value, so one click asks the conversation's
reveal route for that one value (:func:`reveal`). Export and the store keep the text
as it was.

The shapes are the well-known prefixed formats, after the gitleaks rules
(github.com/gitleaks/gitleaks, cmd/generate/config/rules: openai.go, anthropic.go, aws.go,
gcp.go, github.go, slack.go, stripe.go, jwt.go, privatekey.go). A shape matches only
characters JSON writes as they are, so a string and its JSON form mask alike; a PEM block
(newlines) is the exception, which :func:`reveal` handles by also reading the JSON form.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from litestar import Response

DIGEST_CHARS = 12


@dataclass(frozen=True, slots=True)
class Shape:
    """One kind of secret: the keywords that must occur, the pattern (group ``value`` is the secret)."""

    kind: str
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]
    keep: int
    """Leading characters of the value left visible: the prefix that says what it is (``sk-``, ``AKIA``)."""


def _shape(kind: str, keywords: tuple[str, ...], pattern: str, keep: int = 0) -> Shape:
    return Shape(kind, keywords, re.compile(pattern), keep)


_EDGE = r"(?<![A-Za-z0-9_-])"

SHAPES: tuple[Shape, ...] = (
    _shape(
        "private key",
        ("PRIVATE KEY",),
        r"(?P<value>-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----)",
    ),
    _shape("anthropic key", ("sk-ant-",), _EDGE + r"(?P<value>sk-ant-[A-Za-z0-9_-]{20,})", 7),
    _shape("openai key", ("sk-",), _EDGE + r"(?P<value>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})", 3),
    _shape("stripe key", ("_live_", "_test_"), _EDGE + r"(?P<value>[sr]k_(?:live|test)_[A-Za-z0-9]{20,})", 8),
    _shape(
        "aws access key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"\b(?P<value>(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b", 4
    ),
    _shape(
        "aws secret key",
        ("ecret", "ECRET"),
        r"(?i:aws_?secret_?(?:access_?)?key)[\"'\s:=]{1,6}(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    _shape("google api key", ("AIza",), r"\b(?P<value>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])", 4),
    _shape(
        "github token",
        ("gh", "github_pat_"),
        r"\b(?P<value>(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))",
        4,
    ),
    _shape("slack token", ("xox",), r"\b(?P<value>xox[abposr]-[A-Za-z0-9-]{10,})", 5),
    _shape("jwt", ("eyJ",), r"\b(?P<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", 3),
    # A bearer token has no prefix of its own: the word before it is the evidence; a digit keeps prose out.
    _shape(
        "bearer token",
        ("earer",),
        r"\b[Bb]earer\s+(?P<value>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{12,}=*)",
    ),
    _shape(
        "basic credentials", ("Basic",), r"(?i:authorization)[\"'\s:=]{1,6}Basic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})"
    ),
)


@dataclass(frozen=True, slots=True)
class Secret:
    """One masked value as a page shows it: its kind, its digest, and the text that stands in for it."""

    kind: str
    digest: str
    masked: str


class Segment(NamedTuple):
    """A piece of a text: plain, or a secret (``text`` is then its masked form)."""

    text: str
    secret: Secret | None = None


def digest(value: str) -> str:
    """The name of a secret on a page: a hash prefix, enough to tell values apart and to reveal one."""
    return hashlib.sha256(b"traceloupe-secret\x00" + value.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def _spans(text: str) -> list[tuple[int, int, Shape]]:
    found: list[tuple[int, int, Shape]] = []
    for shape in SHAPES:
        if not any(k in text for k in shape.keywords):
            continue
        found.extend((m.start("value"), m.end("value"), shape) for m in shape.pattern.finditer(text))
    if len(found) < 2:
        return found
    found.sort(key=lambda s: (s[0], -s[1]))
    kept: list[tuple[int, int, Shape]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:  # overlaps keep the first (and longest) match
            kept.append(span)
    return kept


def segments(text: str) -> tuple[Segment, ...]:
    """``text`` cut into plain pieces and masked secrets, in order; one plain piece when it holds none.

    A secret's segment carries its masked text and digest only, never the value.
    """
    spans = _spans(text)
    if not spans:
        return (Segment(text),)
    out: list[Segment] = []
    pos = 0
    for start, end, shape in spans:
        if start > pos:
            out.append(Segment(text[pos:start]))
        value = text[start:end]
        name = digest(value)
        masked = f"{value[: shape.keep]}…[masked {shape.kind} #{name}]"
        out.append(Segment(masked, Secret(shape.kind, name, masked)))
        pos = end
    if pos < len(text):
        out.append(Segment(text[pos:]))
    return tuple(out)


def safe_cut(text: str, at: int) -> int:
    """Where to cut ``text`` near ``at`` so that no secret is split (a split key would show unmasked)."""
    window = 8_192
    start = max(0, at - window)
    for first, last, _ in _spans(text[start : at + window]):
        if start + first < at < start + last:
            return start + first
    return at


def cover_secrets(text: str, start: int, end: int) -> tuple[int, int]:
    """``start``..``end`` of ``text`` widened so that no secret lies partly inside it."""
    for first, last, _ in _spans(text):
        if first < end and start < last:
            start, end = min(start, first), max(end, last)
    return start, end


def mask(text: str) -> str:
    """``text`` with every secret replaced by its masked form."""
    return "".join(s.text for s in segments(text))


ID_KEYS = frozenset({"conversation_id", "msg_id", "run_id", "call_id", "id", "up_to_msg_id", "next_cursor", "upto"})
"""Keys whose values are identifiers a client sends back: never masked, or the client could not use them."""


def mask_value(value: Any) -> Any:
    """A JSON-like value or a dataclass with every string masked (identifiers excepted); a new value."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, Mapping):
        return {k: (v if k in ID_KEYS else mask_value(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: mask_value(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in ID_KEYS
        }
        return dataclasses.replace(value, **changes)
    return value


def strings(value: Any) -> Iterable[str]:
    """Every string in a JSON-like value, keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def reveal(texts: Iterable[str], name: str) -> str | None:
    """The secret whose digest is ``name`` among ``texts`` (or in their JSON form, as a payload shows it)."""
    for text in texts:
        for form in (text, json.dumps(text, ensure_ascii=False)[1:-1]):
            for start, end, _ in _spans(form):
                if digest(form[start:end]) == name:
                    return form[start:end]
    return None


def mask_response(response: Response[Any]) -> Response[Any]:
    """The API's ``after_request`` hook: a handler's value goes out with every secret masked."""
    response.content = mask_value(response.content)
    return response
