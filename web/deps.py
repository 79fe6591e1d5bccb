"""Dependency types for handlers: the source and the settings are trusted objects, not request data.

Litestar validates handler arguments with msgspec; a Protocol or a frozen dataclass
built by ``create_app`` must pass through untouched, hence ``SkipValidation``.
"""

from __future__ import annotations

from litestar.di import NamedDependency
from litestar.params import SkipValidation

from web.settings import Settings
from web.source import TimelineSource
from web.timeline import TimelineCache

SourceDep = NamedDependency[SkipValidation[TimelineSource]]
SettingsDep = NamedDependency[SkipValidation[Settings]]
TimelinesDep = NamedDependency[SkipValidation[TimelineCache]]
