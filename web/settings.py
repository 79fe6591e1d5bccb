"""The dashboard's settings: one typed, frozen object handed to ``create_app``.

Nothing here reads the environment or the disk; the CLI (``traceloupe serve``) and
the tests build a Settings and pass it in, so every security knob is visible at the
call site and in one repr (which never shows the CSRF secret).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from core.accounts.policy import LoginPolicy
from core.providers.dialects import DEFAULT_PROVIDER
from web import urls


def _package_folder(package: str) -> Path:
    """The folder of a data package: inside site-packages for a wheel, the checkout's for an editable install."""
    found = resources.files(package)
    if not isinstance(found, Path):  # a zipped install: Jinja and the static router need real files
        raise RuntimeError(f"{package} is not installed as files on disk ({found!r})")
    return found


TEMPLATES_DIR = _package_folder("web.templates")
STATIC_DIR = _package_folder("web.static")

HTMX_VERSION = "2.0.11"
"""The vendored htmx release (``static/vendor/htmx-<version>.min.js``; sha256 in static/vendor/README.md)."""

LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""Host names every instance answers to; anything else must be configured by name."""

MiB = 1024 * 1024
# The defaults ``traceloupe serve`` offers as its options' defaults, in the options' units.
DEFAULT_IMPORT_MIB = 256
DEFAULT_INGEST_MIB = 64
DEFAULT_HEAVY_BUDGET_SECONDS = 20.0
DEFAULT_HEAVY_CONCURRENCY = 4
DEFAULT_MAX_CONNECTIONS = 100
CSRF_COOKIE_PREFIX = "csrftoken_"
SESSION_COOKIE_PREFIX = "session_"

IMPORT_PATH = urls.IMPORT
"""A route with a larger body limit (``Settings.import_max_bytes``): uploads of trace files."""
INGEST_PATH = urls.OTLP_TRACES
"""The other route with its own body limit (``Settings.ingest_max_bytes``): OTLP trace exports. It authenticates
with an ingest key, not a cookie, so the browser's same-origin rule is not its (``SecurityGuard.key_paths``)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How one dashboard instance behaves.

    ``allowed_hosts`` adds names (lower case, without port) to the loopback ones; a
    request whose ``Host`` is not on the list is rejected before routing, which is the
    defence against DNS rebinding. ``csrf_secret`` signs the CSRF cookie; the default is
    a fresh random value per process, which is right for a local viewer (a restart only
    invalidates open forms) until the CLI persists one per install. ``page_size`` cards
    come per response; a jump loads at most ``max_jump_cards`` ahead in one response and
    opens the card's own page beyond that.

    ``max_body_bytes`` bounds every request body except the import upload's, which has its
    own explicit, larger ``import_max_bytes`` (``POST /import`` only), and an OTLP export's,
    ``ingest_max_bytes`` (``POST /v1/traces`` only; the bound of its decompressed body too). At most
    ``ingest_max_pending`` received batches wait for assembly; past it an export gets 503 and Retry-After.
    ``attachments_root`` is the one directory Path attachments are read from, by the payload adapters and by the
    attachments route alike; None means no file is ever read or served.

    Heavy requests (payload, phases, diff, compare, import) run at most ``heavy_concurrency``
    at a time and are stopped after ``heavy_budget_seconds`` (an import after
    ``import_budget_seconds``: large files take minutes, and stopping one rolls it back); one
    more waits up to ``heavy_queue_seconds`` for its turn before it is refused (503). A
    request body that stops arriving for ``body_timeout_seconds`` is given up (408). The server
    closes a connection whose request headers take longer than ``header_timeout_seconds`` and
    keeps at most ``max_connections`` open (503 beyond; ``web.serving``).

    The payload and diff pages of a conversation of at least ``prepare_min_records`` records are
    not built on a request when their digest is missing: the page shows how far its digest is made
    in the background (``web.bodies.preparing``).

    Accounts (``web.auth``): once one exists every request needs a login; ``login_required`` demands one even
    before (``--allow-remote``). ``secure_cookies`` marks the session and CSRF cookies Secure (HTTPS only);
    ``login_policy`` holds the session lifetimes and the login rate limit.
    """

    allowed_hosts: tuple[str, ...] = ()
    csrf_secret: str = field(default_factory=lambda: secrets.token_hex(32), repr=False)
    max_body_bytes: int = 16 * MiB
    page_size: int = 100
    max_jump_cards: int = 1000
    debug: bool = False
    import_max_bytes: int = DEFAULT_IMPORT_MIB * MiB
    ingest_max_bytes: int = DEFAULT_INGEST_MIB * MiB
    ingest_max_pending: int = 10_000
    attachments_root: Path | None = None
    default_provider: str = DEFAULT_PROVIDER
    heavy_budget_seconds: float = DEFAULT_HEAVY_BUDGET_SECONDS
    heavy_concurrency: int = DEFAULT_HEAVY_CONCURRENCY
    heavy_queue_seconds: float = 10.0
    import_budget_seconds: float = 600.0
    body_timeout_seconds: float = 30.0
    header_timeout_seconds: float = 10.0
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    prepare_min_records: int = 20_000
    secure_cookies: bool = False
    login_required: bool = False
    login_policy: LoginPolicy = field(default_factory=LoginPolicy)
    templates_dir: Path = TEMPLATES_DIR
    static_dir: Path = STATIC_DIR

    def __post_init__(self) -> None:
        if self.page_size < 1:
            raise ValueError("page_size must be at least 1")
        if self.max_jump_cards < self.page_size:
            raise ValueError("max_jump_cards must be at least page_size")
        if self.max_body_bytes < 1:
            raise ValueError("max_body_bytes must be at least 1")
        if self.import_max_bytes < self.max_body_bytes:
            raise ValueError("import_max_bytes must be at least max_body_bytes")
        if self.ingest_max_bytes < 1 or self.ingest_max_pending < 1:
            raise ValueError("ingest_max_bytes and ingest_max_pending must be at least 1")
        timeouts = (self.heavy_budget_seconds, self.import_budget_seconds, self.body_timeout_seconds)
        if min(*timeouts, self.header_timeout_seconds) <= 0:
            raise ValueError("time budgets and timeouts must be positive")
        if self.heavy_queue_seconds < 0:
            raise ValueError("heavy_queue_seconds must not be negative")
        if self.prepare_min_records < 0:
            raise ValueError("prepare_min_records must not be negative")
        if self.heavy_concurrency < 1:
            raise ValueError("heavy_concurrency must be at least 1")
        if self.max_connections < self.heavy_concurrency:
            raise ValueError("max_connections must be at least heavy_concurrency")
        if len(self.csrf_secret) < 32:
            raise ValueError("csrf_secret must be at least 32 characters")

    @property
    def csrf_cookie_name(self) -> str:
        """The CSRF cookie's name, one per signing key, so one per store: cookies ignore ports, and two dashboards
        on one host (a demo beside a store's) must not overwrite each other's. A hash: the name reveals no key."""
        digest = hashlib.sha256(b"traceloupe csrf cookie name\0" + self.csrf_secret.encode()).hexdigest()
        return f"{CSRF_COOKIE_PREFIX}{digest[:16]}"

    @property
    def session_cookie_name(self) -> str:
        """The session cookie's name, one per store like the CSRF cookie's (and for the same reason)."""
        digest = hashlib.sha256(b"traceloupe session cookie name\0" + self.csrf_secret.encode()).hexdigest()
        return f"{SESSION_COOKIE_PREFIX}{digest[:16]}"

    @property
    def hosts(self) -> frozenset[str]:
        """Every host name this instance answers to, normalised to lower case."""
        return frozenset(h.lower().strip("[]") for h in (*LOOPBACK_HOSTS, *self.allowed_hosts))

    @property
    def body_limits(self) -> dict[str, int]:
        """Paths whose POST body may be larger than ``max_body_bytes``, and their own limit."""
        return {IMPORT_PATH: self.import_max_bytes, INGEST_PATH: self.ingest_max_bytes}
