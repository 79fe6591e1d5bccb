"""Path and URL references that survive a JSON round trip byte for byte.

FORMAT.md fixes the rule: in a field that takes a path or a URL, a string that
begins with a scheme of two or more letters and a colon is a URL, anything else
is a path. ``pathlib.Path`` and pydantic's ``AnyUrl`` both normalise their input
(``./x`` becomes ``x``, ``https://a.b`` gains a slash), which would break the
"same string back" promise, so both references are ``str`` subclasses that keep
the text verbatim and only add meaning.
"""

from __future__ import annotations

import re
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

# Two or more letters, then letters/digits/+/-/. , then a colon: a one-letter
# "scheme" is a Windows drive (C:\x), which FORMAT.md calls a path.
URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+:")
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:|\\\\)")


def looks_like_url(text: str) -> bool:
    """True when ``text`` starts with a URL scheme by FORMAT.md's rule."""
    return URL_SCHEME.match(text) is not None


class UrlRef(str):
    """A URL kept exactly as written (``https:``, ``data:``, even ``javascript:``)."""

    __slots__ = ()

    @property
    def scheme(self) -> str:
        """The scheme in lower case, without the colon."""
        return self.split(":", 1)[0].lower()

    def __repr__(self) -> str:
        return f"UrlRef({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _ref_schema(cls, url=True)


class PathRef(str):
    """A file path kept exactly as written; it is never resolved against the server's disk here."""

    __slots__ = ()

    def as_path(self) -> PurePath:
        """The path as a pure path object (Windows-style when it has a drive or a UNC prefix)."""
        if _WINDOWS_PATH.match(self):
            return PureWindowsPath(self)
        return PurePosixPath(self)

    @property
    def name(self) -> str:
        """The last component of the path (the file name)."""
        return self.as_path().name

    def __repr__(self) -> str:
        return f"PathRef({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _ref_schema(cls, url=False)


def to_location(text: str) -> UrlRef | PathRef:
    """Classify a raw string as a URL or a path by FORMAT.md's scheme rule."""
    if isinstance(text, UrlRef | PathRef):
        return text
    return UrlRef(text) if looks_like_url(text) else PathRef(text)


def _validate_url(value: str) -> UrlRef:
    if isinstance(value, UrlRef):
        return value
    if not looks_like_url(value):
        raise ValueError("expected a URL (a scheme of two or more letters and a colon)")
    return UrlRef(value)


def _validate_path(value: str) -> PathRef:
    return value if isinstance(value, PathRef) else PathRef(value)


def _ref_schema(cls: type[str], *, url: bool) -> core_schema.CoreSchema:
    validator = _validate_url if url else _validate_path
    from_str = core_schema.no_info_after_validator_function(validator, core_schema.str_schema())
    return core_schema.json_or_python_schema(
        json_schema=from_str,
        python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_str]),
        serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
    )


class _LocationSchema:
    """Pydantic hook for a field that holds either a path or a URL (decided by the scheme rule)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            to_location,
            core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="json"),
        )


LocationField = Annotated[UrlRef | PathRef, _LocationSchema]
"""Field type for message content that is a path or a URL (image, audio, video, attachment)."""


class InstanceOnly:
    """Annotated marker: accept an existing instance of the annotated type, never JSON input.

    Used where a wide union should keep a Python-built PathRef/UrlRef as it is while JSON
    strings fall through to plain ``str`` (pydantic's InstanceOf would parse JSON too).
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        # No function serialiser: inside a union it would accept (and stringify) any value.
        return core_schema.is_instance_schema(source)
