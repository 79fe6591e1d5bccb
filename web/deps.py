"""Dependency types for handlers: the source, the payload builder and the settings are trusted objects.

Litestar validates handler arguments with msgspec; objects built by ``create_app``
must pass through untouched, hence ``SkipValidation``.
"""

from __future__ import annotations

from litestar.di import NamedDependency
from litestar.params import SkipValidation

from web.heavy import HeavyWork
from web.payloads.builder import PayloadBuilder
from web.runs.service import RunService
from web.settings import Settings
from web.source import StoreSource

SourceDep = NamedDependency[SkipValidation[StoreSource]]
SettingsDep = NamedDependency[SkipValidation[Settings]]
PayloadsDep = NamedDependency[SkipValidation[PayloadBuilder]]
HeavyDep = NamedDependency[SkipValidation[HeavyWork]]
RunsDep = NamedDependency[SkipValidation[RunService]]
