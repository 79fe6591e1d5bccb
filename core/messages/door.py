"""The one door for messages in and out of JSON: a TypeAdapter that pauses the cyclic GC while it builds.

Loading a large trace allocates hundreds of thousands of small objects at once; CPython's
cyclic collector, triggered every 700 allocations, rescans the growing heap again and
again (``bench/bench_core.py`` shows the cost). Validated messages form no reference cycles,
so nothing is missed by pausing it; it runs again as soon as the call returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter

T = TypeVar("T")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, unless someone already paused it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class MessageAdapter(Generic[T]):
    """``TypeAdapter[T]`` with the collector paused during validation; dumping passes straight through."""

    def __init__(self, type_: Any) -> None:
        self.adapter: TypeAdapter[T] = TypeAdapter(type_)

    def validate_json(self, data: str | bytes | bytearray, **kwargs: Any) -> T:
        """Parse JSON text into typed messages (pydantic's validate_json)."""
        with gc_paused():
            return self.adapter.validate_json(data, **kwargs)

    def validate_python(self, data: Any, **kwargs: Any) -> T:
        """Validate already-parsed JSON values or instances (pydantic's validate_python)."""
        if not gc.isenabled():  # paused by the caller (an import): no context to enter per message
            return self.adapter.validate_python(data, **kwargs)
        with gc_paused():
            return self.adapter.validate_python(data, **kwargs)

    def dump_json(self, value: T, **kwargs: Any) -> bytes:
        """Serialise to JSON bytes (pydantic's dump_json)."""
        return self.adapter.dump_json(value, **kwargs)

    def dump_python(self, value: T, **kwargs: Any) -> Any:
        """Serialise to Python values; ``mode="json"`` gives JSON-ready values."""
        return self.adapter.dump_python(value, **kwargs)
