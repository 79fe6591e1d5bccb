"""The key of a derived result kept in the store (``core.store.digests``): what it was made from, hashed.

The payload and diff digests (``web.bodies.digest``) and a long timeline's order (``web.timeline.paged``)
share these rules, and with them one basis per conversation: writing a digest drops those of another basis,
so every kind must name its basis alike or they would drop each other.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from core.store import Store
from core.store import digests as stored

DIGEST_FORMAT = 3
"""Bumped when what a digest holds, or how a page is made from it, changes."""


def traceloupe_version() -> str:
    """The installed Traceloupe's version (a digest made by another version is never read)."""
    try:
        return metadata.version("traceloupe")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, slots=True)
class DigestKey:
    """A digest's key and basis, and the conversation it belongs to."""

    key: str
    basis: str
    conversation_pk: int

    def write(self, store: Store, kind: str, head: bytes, parts: Iterable[stored.Part]) -> None:
        """Store a digest of ``kind`` under this key: its packed head and parts (``stored.write_digest``)."""
        stored.write_digest(
            store.engine, self.key, conversation_pk=self.conversation_pk, kind=kind, basis=self.basis, head=head,
            parts=parts,
        )  # fmt: skip


def key_for(store: Store, conversation_id: str, kind: str, asked: tuple[object, ...]) -> DigestKey | None:
    """The key of the digest of ``kind`` asked as ``asked`` for the conversation as stored now (None: unknown)."""
    found = stored.content_fingerprint(store.engine, conversation_id)
    if found is None:
        return None
    pk, fingerprint = found
    basis = hashlib.sha256(json.dumps([DIGEST_FORMAT, traceloupe_version(), fingerprint]).encode()).hexdigest()
    key = hashlib.sha256(json.dumps([basis, kind, *map(_plain, asked)]).encode()).hexdigest()
    return DigestKey(key, basis, pk)


def _plain(value: object) -> object:
    return str(value) if isinstance(value, Path) else value


def bucket_of(name: str, buckets: int) -> int:
    """The bucket a digest keeps ``name``'s entry in, of ``buckets`` (a hash stable across processes): a lookup of
    a few names reads a few small parts, not a map of the whole conversation."""
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % buckets


def bucket_count(entries: int, per_bucket: int) -> int:
    """How many buckets hold ``entries`` entries, about ``per_bucket`` each."""
    return max(1, entries // per_bucket)
