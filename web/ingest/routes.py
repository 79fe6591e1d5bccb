"""The ingest slice's route handlers: ``web.app`` mounts them on a router with the export's own body limit."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.ingest.controllers import export_traces

ROUTES: list[ControllerRouterHandler] = [export_traces]
