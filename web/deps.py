"""Dependency types for handlers: the source and the settings are trusted objects, not request data.

Litestar validates handler arguments with msgspec; a Protocol or a frozen dataclass
built by ``create_app`` must pass through untouched, hence ``skip_validation``.
"""

from __future__ import annotations

from typing import Annotated

from litestar.params import Dependency

from web.settings import Settings
from web.source import TimelineSource

SourceDep = Annotated[TimelineSource, Dependency(skip_validation=True)]
SettingsDep = Annotated[Settings, Dependency(skip_validation=True)]
