"""The Litestar app factory: routes, templates, static files, security, error pages.

``create_app(settings, source)`` is the only way the dashboard is assembled, by
``traceloupe serve`` and by the tests alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from litestar import Litestar
from litestar.config.csrf import CSRFConfig
from litestar.di import Provide
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.plugins.htmx import HTMXPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from web.controllers.api import ApiController
from web.controllers.check import CheckController
from web.controllers.conversations import ConversationController
from web.controllers.runs import RunsApiController, RunsController
from web.errors import EXCEPTION_HANDLERS
from web.runs.service import RunService
from web.runs.views import install_template_globals
from web.security import SecurityGuard, add_security_headers
from web.settings import HTMX_VERSION, Settings
from web.source import InMemoryTimelineSource, TimelineSource
from web.timeline import TimelineCache
from web.timeline.build import format_ts

if TYPE_CHECKING:
    from core.store import Store

__version__ = "0.1.0"

HTMX_CONFIG: dict[str, Any] = {
    # Explicit even where 2.x defaults agree: the page must not depend on a default changing.
    "selfRequestsOnly": True,
    "allowEval": False,
    "allowScriptTags": False,
    "historyCacheSize": 0,
    "refreshOnHistoryMiss": True,
    # htmx would inject a <style> element, which the CSP (style-src 'self') refuses; app.css has the rules.
    "includeIndicatorStyles": False,
}


def jinja_environment(settings: Settings) -> Environment:
    """The one Jinja environment: autoescape on for every template (Jinja's own default is off)."""
    env = Environment(
        loader=FileSystemLoader(settings.templates_dir),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["htmx_src"] = f"/static/vendor/htmx-{HTMX_VERSION}.min.js"
    env.globals["htmx_config"] = HTMX_CONFIG
    env.filters["format_ts"] = format_ts
    install_template_globals(env, None)  # create_app installs them again with its run service
    return env


def create_app(
    settings: Settings,
    source: TimelineSource | None = None,
    *,
    store: Store | None = None,
    runs: RunService | None = None,
) -> Litestar:
    """Assemble the dashboard; ``source`` defaults to the settings' trace files held in memory.

    Replay needs the store: with ``store`` (or a ready ``runs`` service) the Re-run controls
    are live, without it they say so and the run routes answer 503.
    """
    timeline_source: TimelineSource = source or InMemoryTimelineSource.from_paths(settings.trace_files)
    timelines = TimelineCache()
    run_service = runs if runs is not None else RunService(store) if store is not None else None
    env = jinja_environment(settings)
    install_template_globals(env, run_service)
    app = Litestar(
        route_handlers=[
            ApiController,
            ConversationController,
            CheckController,
            RunsController,
            RunsApiController,
            create_static_files_router(path="/static", directories=[settings.static_dir], include_in_schema=False),
        ],
        dependencies={
            "source": Provide(lambda: timeline_source, use_cache=True, sync_to_thread=False),
            "settings": Provide(lambda: settings, use_cache=True, sync_to_thread=False),
            "timelines": Provide(lambda: timelines, use_cache=True, sync_to_thread=False),
            "runs": Provide(lambda: run_service, use_cache=True, sync_to_thread=False),
        },
        on_shutdown=[run_service.shutdown] if run_service is not None else [],
        template_config=TemplateConfig(engine=JinjaTemplateEngine.from_environment(env)),
        plugins=[HTMXPlugin()],
        csrf_config=CSRFConfig(secret=settings.csrf_secret, cookie_samesite="strict", cookie_httponly=True),
        exception_handlers=EXCEPTION_HANDLERS,
        before_send=[add_security_headers],
        request_max_body_size=settings.max_body_bytes,
        debug=settings.debug,
        # The schema as JSON only: the bundled UIs load scripts from CDNs, which the CSP (rightly) refuses.
        openapi_config=OpenAPIConfig(
            title="Traceloupe",
            version=__version__,
            path="/schema",
            render_plugins=[JsonRenderPlugin(path=["/", "/openapi.json"])],
        ),
    )
    # Litestar's middleware runs per route, after routing; the guard must also cover 404s and static
    # files, so it wraps the whole handler (inside the before_send hook, so refusals get the headers too).
    app.asgi_handler = SecurityGuard(app.asgi_handler, hosts=settings.hosts, max_body_bytes=settings.max_body_bytes)
    return app
