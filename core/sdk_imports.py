"""One lock over every import of a provider SDK.

The SDKs are imported on first use (they cost seconds at start-up). Two threads importing overlapping
parts of one SDK at once can deadlock in CPython's per-module locks, which then hands one of them a
partly imported module: a replay failing with an ImportError that has nothing to do with its body.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

SDK_IMPORT_LOCK = threading.RLock()
"""Held around any ``import`` of openai, anthropic, google.genai or httpx2 outside module level."""


def import_sdk(name: str) -> ModuleType:
    """Import the SDK module ``name`` (a dotted path) under :data:`SDK_IMPORT_LOCK`."""
    with SDK_IMPORT_LOCK:
        return importlib.import_module(name)
