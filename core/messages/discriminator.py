"""The seed's callable discriminator, compiled into pydantic-core's own tag lookups.

``get_discriminator_value`` (role:msg_type, DEFAULT_TAG when msg_type is absent)
is the rule. Handed to pydantic as a plain callable, it makes pydantic-core turn
every JSON object it dispatches into a Python dict first, the whole subtree
included: on a long trace that is the entire document converted twice over,
costlier than the load itself (``bench/PERFORMANCE.md``). ``CompiledDiscriminator`` keeps the
same rule and the same public function, but builds the union from two lookups
pydantic-core does natively: first ``role``, then, for roles with subclasses,
``msg_type`` with ``role`` as the fallback path (so a missing msg_type lands on
the DEFAULT_TAG member). A test checks the two agree on every generated input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

from pydantic import Discriminator, GetCoreSchemaHandler, Tag
from pydantic_core import PydanticCustomError, core_schema

from core.messages.base import ROLES  # roles without subclasses always take the DEFAULT_TAG member

DEFAULT_TAG = "default"


class CompiledDiscriminator(Discriminator):
    """``Discriminator(fn)`` whose tags are ``role:msg_type`` plus DEFAULT_TAG, validated without calling ``fn``.

    ``fn`` stays the definition (it dispatches Python instances elsewhere and documents
    the rule); only the core schema is built from native lookups for speed.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        by_role: dict[str, dict[str, core_schema.CoreSchema]] = {}
        default: core_schema.CoreSchema | None = None
        for tag, cls in tagged_members(source):
            schema = handler.generate_schema(cls)
            if tag == DEFAULT_TAG:
                default = schema
            else:
                role, msg_type = tag.split(":", 1)
                by_role.setdefault(role, {})[msg_type] = schema
        choices: dict[str, core_schema.CoreSchema] = {}
        for role in ROLES:
            if role in by_role:
                inner = dict(by_role[role])
                if default is not None:
                    # The fallback path yields the role itself when msg_type is absent.
                    inner[role] = core_schema.no_info_before_validator_function(_refuse_msg_type, default)
                paths: list[list[str | int]] = [["msg_type"], ["role"]]
                choices[role] = core_schema.tagged_union_schema(inner, discriminator=paths)
            elif default is not None:
                choices[role] = default
        # Each value serialises by its own class (what dispatch would pick anyway): the union's would re-read the tags.
        return core_schema.tagged_union_schema(
            choices, discriminator="role", serialization=core_schema.simple_ser_schema("any")
        )


def tagged_members(union: Any) -> Iterator[tuple[str, Any]]:
    """``(tag, class)`` of each ``Annotated[cls, Tag(tag)]`` member of a union, in order."""
    for member in get_args(union):
        cls, *metadata = get_args(member)
        yield next(m.tag for m in metadata if isinstance(m, Tag)), cls


def _refuse_msg_type(value: Any) -> Any:
    """Reached only for a user/assistant record whose msg_type equals its role's name: not a known tag."""
    if isinstance(value, dict) and "msg_type" in value:
        tag = f"{value.get('role')}:{value.get('msg_type')}"
        raise PydanticCustomError(
            "union_tag_invalid",
            "Input tag '{tag}' found using get_discriminator_value() does not match any of the expected tags",
            {"tag": tag, "discriminator": "get_discriminator_value()", "expected_tags": ""},
        )
    return value
