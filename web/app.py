"""The Litestar app factory: routes, templates, static files, security, error pages.

``create_app(settings, store)`` is the only way the dashboard is assembled, by
``traceloupe serve``, ``traceloupe demo`` and the tests alike. The caller owns the
store (opens and closes it); the app only reads it, and writes through imports.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from litestar import Litestar, Router
from litestar.config.csrf import CSRFConfig
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.plugins.htmx import HTMXPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.template.config import TemplateConfig

from core.accounts import Accounts, Role
from core.providers import dialect_names
from core.store import Store
from web import masking, urls
from web.accounts import routes as accounts_routes
from web.apidocs import routes as apidocs_routes
from web.assets import Assets
from web.attachments import routes as attachments_routes
from web.auth.access import needs
from web.auth.audit import AuditMiddleware
from web.auth.csrf import KeyAwareCSRF
from web.auth.guard import access_guard
from web.auth.principals import Gate, signed_in
from web.backlog import Backlog
from web.bodies.builder import PayloadBuilder
from web.bodies.preparations import Preparations
from web.check import routes as check_routes
from web.conversations import routes as conversations_routes
from web.deps import REQUEST_WORK
from web.diff import routes as diff_routes
from web.errors import EXCEPTION_HANDLERS, document_api_errors
from web.heavy import HeavyWork, Limits
from web.imports import routes as imports_routes
from web.ingest import routes as ingest_routes
from web.ingest.service import resume_assembly
from web.payloads import routes as payloads_routes
from web.records import routes as records_routes
from web.replays.service import RunService
from web.runs import routes as runs_routes
from web.security import SecurityGuard, add_security_headers
from web.settings import HTMX_VERSION, INGEST_PATH, Settings
from web.source import StoreSource
from web.suites import routes as suites_routes
from web.tasks import use_web_tasks
from web.timeline.build import format_ts
from web.timeline.fields import collapses

__version__ = "0.1.0"

PAGE_ROUTES = [
    *conversations_routes.ROUTES,
    *records_routes.ROUTES,
    *payloads_routes.ROUTES,
    *diff_routes.ROUTES,
    *runs_routes.ROUTES,
    *attachments_routes.ROUTES,
    *check_routes.ROUTES,
    *suites_routes.ROUTES,
    *apidocs_routes.ROUTES,
    *accounts_routes.ROUTES,
]
"""Every slice's handlers but the imports' and the ingest's, which ``create_app`` mounts under their body limits."""

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


def jinja_environment(settings: Settings, assets: Assets | None = None) -> Environment:
    """The one Jinja environment: autoescape on for every template (Jinja's own default is off)."""
    assets = assets if assets is not None else Assets(settings.static_dir)
    env = Environment(
        loader=FileSystemLoader(settings.templates_dir),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["asset"] = assets.url
    env.globals["paths"] = urls.SitePaths()
    env.globals["htmx_src"] = assets.url(f"vendor/htmx-{HTMX_VERSION}.min.js")
    env.globals["htmx_config"] = HTMX_CONFIG
    env.filters["format_ts"] = format_ts
    # Trace text on a page: secrets as masked segments (each revealed on a click), long text collapsed.
    env.filters["masked"] = masking.mask
    env.filters["secret_segments"] = masking.segments
    env.tests["collapsed"] = collapses
    env.globals["attachments_enabled"] = settings.attachments_root is not None
    env.globals["providers"] = dialect_names()
    env.globals["signed_in"] = signed_in
    return env


def create_app(settings: Settings, store: Store | StoreSource, *, runs: RunService | None = None) -> Litestar:
    """Assemble the dashboard over ``store`` (a Store, or a StoreSource that wraps one).

    Replays go through the store's job queue (``runs``, made from the store when not given), started with the app.
    """
    use_web_tasks()
    source = store if isinstance(store, StoreSource) else StoreSource(store)
    backlog = Backlog()
    preparations = Preparations(backlog, settings.prepare_min_records)
    payloads = PayloadBuilder(settings.attachments_root, backlog=backlog, preparations=preparations)
    run_service = runs if runs is not None else RunService(source.store)
    heavy = HeavyWork(Limits(settings.heavy_budget_seconds, settings.heavy_concurrency, settings.heavy_queue_seconds))
    assets = Assets(settings.static_dir)
    env = jinja_environment(settings, assets)
    gate = Gate(
        Accounts(source.store, settings.login_policy),
        source.store.api_keys,
        cookie_name=settings.session_cookie_name,
        secure_cookies=settings.secure_cookies,
        login_required=settings.login_required,
    )
    csrf = CSRFConfig(
        secret=settings.csrf_secret,
        cookie_name=settings.csrf_cookie_name,
        cookie_samesite="strict",
        cookie_httponly=True,
        cookie_secure=settings.secure_cookies,
    )
    app = Litestar(
        route_handlers=[
            *PAGE_ROUTES,
            # The import upload's own, larger body limit lives on this router and nowhere else.
            Router("/", route_handlers=imports_routes.ROUTES, request_max_body_size=settings.import_max_bytes),
            # So does the OTLP export's (its handler bounds the decompressed body to the same figure).
            Router("/", route_handlers=ingest_routes.ROUTES, request_max_body_size=settings.ingest_max_bytes),
            assets.handler(),
        ],
        dependencies={
            "source": Provide(lambda: source, use_cache=True, sync_to_thread=False),
            "settings": Provide(lambda: settings, use_cache=True, sync_to_thread=False),
            "payloads": Provide(lambda: payloads, use_cache=True, sync_to_thread=False),
            "run_service": Provide(lambda: run_service, use_cache=True, sync_to_thread=False),
            "heavy": Provide(lambda: heavy, use_cache=True, sync_to_thread=False),
            "gate": Provide(lambda: gate, use_cache=True, sync_to_thread=False),
            "work": REQUEST_WORK,
        },
        # Every route declares what it needs (``web.auth.access``); this one guard enforces it.
        guards=[access_guard(gate)],
        # The CSRF check is innermost, as Litestar's own is; it leaves requests with a valid API key alone.
        middleware=[
            DefineMiddleware(AuditMiddleware, accounts=gate.accounts),
            DefineMiddleware(KeyAwareCSRF, config=csrf, gate=gate),
        ],
        on_startup=[run_service.start, lambda: resume_assembly(source.store, run_service.queue)],
        on_shutdown=[run_service.shutdown, backlog.close],
        template_config=TemplateConfig(engine=JinjaTemplateEngine.from_environment(env)),
        plugins=[HTMXPlugin()],
        exception_handlers=EXCEPTION_HANDLERS,
        before_send=[add_security_headers],
        request_max_body_size=settings.max_body_bytes,
        debug=settings.debug,
        # The schema as JSON only: the bundled UIs load scripts from CDNs, which the CSP (rightly) refuses.
        openapi_config=OpenAPIConfig(
            title="Traceloupe",
            version=__version__,
            path=urls.SCHEMA,
            use_handler_docstrings=True,  # the API page (web/apidocs) says what each operation does
            render_plugins=[JsonRenderPlugin(path=["/", "/openapi.json"])],
            openapi_router=Router(urls.SCHEMA, route_handlers=[], include_in_schema=False, opt=needs(Role.VIEWER)),
        ),
    )
    document_api_errors(app)
    app.state.backlog = backlog  # benchmarks and tests wait on it
    # Litestar's middleware runs per route, after routing; the guard must also cover 404s and static
    # files, so it wraps the whole handler (inside the before_send hook, so refusals get the headers too).
    app.asgi_handler = SecurityGuard(
        app.asgi_handler,
        hosts=settings.hosts,
        max_body_bytes=settings.max_body_bytes,
        body_limits=settings.body_limits,
        body_timeout=settings.body_timeout_seconds,
        key_paths=frozenset({INGEST_PATH}),
    )
    return app
