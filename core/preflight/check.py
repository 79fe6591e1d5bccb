"""Preflight: a built body checked against the SDK types and the provider's request-time rules for its model.

::

    check_body(dialect, body, profile) the findings, each at a JSON pointer of the body
    preflight(result)                  the same for a built request, each finding with its msg_id

A body with no error finding is accepted: the SDK types take it and no rule known to make the
provider answer 400 is broken. Warnings name what some backends of the dialect reject.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from importlib import metadata
from typing import TYPE_CHECKING, Any

from core.models.table import facts_for
from core.preflight import limits as output_limits
from core.preflight import media as media_rules
from core.preflight import sampling as sampling_rules
from core.preflight import strict_json
from core.preflight.findings import Finding, Rule, pointer
from core.preflight.sdk_types import BodyTypeError, Loc, validate_body
from core.providers.profiles import ModelProfile

if TYPE_CHECKING:
    from core.providers import Dialect, RequestResult

JSON = dict[str, Any]

SDK_RULE = "sdk-types"
# A body the types reject usually breaks in one place; past this many errors the rest add nothing.
MAX_TYPE_ERRORS = 10
MAX_DETAIL = 300
# A key of a body; union members in a validation location are type names ("StrictToolParam", "list[...]").
FIELD_NAME = re.compile(r"[a-z_][A-Za-z0-9_]*")
MEMBER_PREFIX = "Strict"  # the strict mirror's TypedDicts are named Strict<SDK name>
TAG_KEYS = ("type", "role")
SCALARS = frozenset({"str", "int", "float", "bool", "bytes", "none"})  # pydantic's names for scalar union members


@dataclass(frozen=True, slots=True)
class Preflight:
    """The verdict on one body for one provider and model: the findings, or none (accepted)."""

    provider: str
    model: str
    profile: str
    findings: tuple[Finding, ...]

    @property
    def accepted(self) -> bool:
        """True when no finding is an error (warnings may remain)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings that make the provider answer 400."""
        return tuple(f for f in self.findings if f.severity == "error")

    def to_json(self) -> JSON:
        """The verdict as the CLI's ``--json`` and the API print it."""
        return {
            "provider": self.provider,
            "model": self.model,
            "profile": self.profile,
            "accepted": self.accepted,
            "findings": [f.to_json() for f in self.findings],
        }


def check_body(dialect: Dialect, body: JSON, profile: ModelProfile, model: str | None = None) -> list[Finding]:
    """Every SDK type error and every broken rule of ``body`` for a model of ``profile``, at JSON pointers.

    ``model`` (default: the body's own ``model``) is looked up in the model table for the media rules.
    """
    findings = list(_type_findings(dialect, body))
    findings.extend(dialect.check_rules(body, profile))
    findings.extend(dialect.check_model_rules(body, facts_for(dialect, model or body.get("model"))))
    findings.extend(media_rules.check(dialect, body, model))
    findings.extend(output_limits.check(dialect, body, model))
    findings.extend(sampling_rules.check(dialect, body))
    findings.extend(strict_json.check(body))
    return findings


def preflight(result: RequestResult, profile: ModelProfile | None = None) -> Preflight:
    """Check a built request against the profile it was built for (or ``profile``); each finding names the
    message whose node broke the rule, where one did."""
    profile = profile or result.profile
    findings = check_body(result.provider, result.body, profile, result.model)
    if findings:
        owners = _owners(result.provenance)
        findings = [replace(f, msg_id=_owner(f.pointer, owners)) for f in findings]
    return Preflight(result.dialect, result.model, profile.name, tuple(findings))


def _type_findings(dialect: Dialect, body: JSON) -> Iterator[Finding]:
    sdk = dialect.sdk_types
    rule = Rule(SDK_RULE, "error", "the SDK request types reject the body", f"{sdk} {_version(sdk)} request types")
    try:
        validate_body(dialect, body)
    except BodyTypeError as exc:
        errors = _matching_members(exc.errors)
        located = [(_pointer_of(body, loc), loc, msg) for loc, msg in errors]
        # A union reports one error per member; the one that got deepest into the body is the mistake, and an
        # error at a node above another error's node only says the other members did not fit either.
        deepest = [e for e in located if not any(o[0].startswith(e[0] + "/") for o in located)]
        reported: set[str] = set()
        for at, loc, msg in deepest:
            if at in reported:
                continue  # several union members failing at the same node: one finding is enough
            reported.add(at)
            yield rule.at(at, _short(f"{_readable(loc) or 'body'}: {msg}"))
            if len(reported) == MAX_TYPE_ERRORS:
                return


def _matching_members(errors: list[tuple[Loc, str]]) -> list[tuple[Loc, str]]:
    """Drop the errors of union members whose tag (``type`` or ``role``) is not the node's: a Responses item
    has no discriminator, so every member reports, and only the one of the item's own type says what is wrong."""
    mismatched: set[Loc] = set()
    for loc, msg in errors:
        if len(loc) >= 2 and loc[-1] in TAG_KEYS and _is_member(loc[-2]) and msg.startswith("Input should be"):
            mismatched.add(loc[:-1])
    kept = [(loc, msg) for loc, msg in errors if not any(loc[: len(m)] == m for m in mismatched)]
    return kept or errors


def _is_member(step: str | int) -> bool:
    return isinstance(step, str) and step.startswith(MEMBER_PREFIX)


def _readable(loc: Loc) -> str:
    """A validation location without the union member names the strict mirror puts in it."""
    return ".".join(
        str(step) for step in loc if isinstance(step, int) or (FIELD_NAME.fullmatch(step) and step not in SCALARS)
    )


@functools.cache
def _version(dist: str) -> str:
    """An installed SDK's version, read once per process: reading package metadata is slow (bench/PERFORMANCE.md)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def _pointer_of(body: JSON, loc: Loc) -> str:
    """The deepest body node along a validation error's location (union tags in the location are skipped)."""
    node: Any = body
    path: list[str | int] = []
    for step in loc:
        found = (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        )
        if not found:
            continue
        node = node[step]
        path.append(step)
    return pointer(*path)


def _owners(provenance: Mapping[str, list[str]]) -> dict[str, str]:
    return {ptr: msg_id for msg_id, ptrs in provenance.items() for ptr in ptrs}


def _owner(at: str, owners: Mapping[str, str]) -> str | None:
    """The msg_id of the deepest tagged node at or above ``at``."""
    while True:
        owner = owners.get(at)
        if owner is not None or not at:
            return owner
        at = at.rsplit("/", 1)[0]
