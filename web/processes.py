"""What lets several dashboard processes on one database behave as one server.

- The CSRF signing key: ``$TRACELOUPE_SECRET`` when set, else the one stored in the database,
  made by the first process that asks (``Store.shared_secret``). A form served by one process
  posts to any other, and to the same process after a restart. Never logged or shown.
- An app factory for ``uvicorn --factory web.processes:app_from_env --workers N``: the store
  from ``$TRACELOUPE_DATABASE_URL``, the allowed host names from ``$TRACELOUPE_ALLOWED_HOSTS``
  (comma-separated), the attachments folder from ``$TRACELOUPE_ATTACHMENTS_ROOT``, and the logins as
  ``serve``'s flags set them: ``$TRACELOUPE_ALLOW_REMOTE=1`` (``--allow-remote``: a login on every request,
  refused without an admin account) and ``$TRACELOUPE_SECURE_COOKIES=1|0`` (``--[no-]secure-cookies``, on by
  default with remote access). ``traceloupe serve --workers N`` runs the same processes itself and keeps its
  connection limits.

Idempotency keys and runs need nothing here: both are rows of the shared database.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from litestar import Litestar

    from core.store import Store
    from web.settings import Settings

SECRET_ENV = "TRACELOUPE_SECRET"  # noqa: S105 - the variable's name, not a secret
ALLOWED_HOSTS_ENV = "TRACELOUPE_ALLOWED_HOSTS"
ATTACHMENTS_ROOT_ENV = "TRACELOUPE_ATTACHMENTS_ROOT"
ALLOW_REMOTE_ENV = "TRACELOUPE_ALLOW_REMOTE"
SECURE_COOKIES_ENV = "TRACELOUPE_SECURE_COOKIES"
FLAG_VALUES: dict[str, bool] = {"1": True, "true": True, "yes": True, "on": True,
                                "0": False, "false": False, "no": False, "off": False}  # fmt: skip
CSRF_SECRET_NAME = "csrf"  # noqa: S105 - the row's name, not a secret
MIN_SECRET_CHARS = 32
MIN_SECRET_BITS = 80
"""Shannon entropy of the secret's own characters times its length: 32 random hex digits give about 110 bits
(never under 90), ``secrets.token_urlsafe(32)`` about 220; 32 spaces, one letter or ``abcd`` repeated 64 or less."""


def secret_bits(secret: str) -> float:
    """An estimate of a secret's entropy in bits, from how often each of its characters occurs."""
    n = len(secret)
    return -sum(c * math.log2(c / n) for c in Counter(secret).values())


def csrf_secret(store: Store, environ: Mapping[str, str]) -> str:
    """``$TRACELOUPE_SECRET``, else the database's shared CSRF secret (made now if no process made it yet).

    A set variable is used or refused, never ignored: empty, short or low-entropy values are a ValueError.
    """
    if SECRET_ENV not in environ:
        return store.shared_secret(CSRF_SECRET_NAME)
    given = environ[SECRET_ENV]
    if not given.strip():
        raise ValueError(f"{SECRET_ENV} is set but empty; unset it to use the database's secret, or set a random one")
    if len(given) < MIN_SECRET_CHARS:
        raise ValueError(f"{SECRET_ENV} must be at least {MIN_SECRET_CHARS} characters")
    if secret_bits(given) < MIN_SECRET_BITS:
        raise ValueError(
            f"{SECRET_ENV} is too predictable (about {secret_bits(given):.0f} bits; at least {MIN_SECRET_BITS}): "
            "use a random value, such as `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
        )
    return given


def with_shared_secret(settings: Settings, store: Store, environ: Mapping[str, str] | None = None) -> Settings:
    """``settings`` signing forms with the secret every process on ``store`` shares."""
    return replace(settings, csrf_secret=csrf_secret(store, os.environ if environ is None else environ))


def env_flag(environ: Mapping[str, str], name: str) -> bool | None:
    """A yes/no variable: None when unset; a value that is neither (``FLAG_VALUES``) is a ValueError, never ignored."""
    if name not in environ:
        return None
    value = FLAG_VALUES.get(environ[name].strip().lower())
    if value is None:
        raise ValueError(f"{name} is 1 or 0 (true/false, yes/no, on/off), not {environ[name][:20]!r}")
    return value


def settings_from_env(environ: Mapping[str, str]) -> Settings:
    """The dashboard settings the factory's environment variables describe (the rest are the defaults)."""
    from web.settings import Settings

    hosts = tuple(h.strip().lower() for h in environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip())
    root = environ.get(ATTACHMENTS_ROOT_ENV, "")
    remote = env_flag(environ, ALLOW_REMOTE_ENV) or False
    secure = env_flag(environ, SECURE_COOKIES_ENV)
    return Settings(
        allowed_hosts=hosts,
        attachments_root=Path(root).expanduser().resolve() if root else None,
        login_required=remote,
        secure_cookies=remote if secure is None else secure,
    )


def refuse_without_admin(store: Store, settings: Settings) -> None:
    """SystemExit saying how to make one when logins are required and no enabled admin account exists."""
    from core.accounts import Accounts

    if settings.login_required and not Accounts(store).any_admin():
        raise SystemExit(
            f"traceloupe: {ALLOW_REMOTE_ENV} needs an admin account first (nobody could log in): "
            "traceloupe users create NAME --role admin"
        )


def app_from_env() -> Litestar:
    """The dashboard over ``$TRACELOUPE_DATABASE_URL`` (an existing, current database), for uvicorn's ``--factory``.

    With ``$TRACELOUPE_ALLOW_REMOTE`` set and no admin account, a SystemExit saying how to create one (as ``serve``).
    """
    from core.store import Store
    from web.allocator import tune_allocator
    from web.app import create_app

    tune_allocator()
    settings = settings_from_env(os.environ)
    store = Store.open(migrate=True)
    try:
        refuse_without_admin(store, settings)
        app = create_app(with_shared_secret(settings, store), store)
    except BaseException:
        store.close()
        raise
    app.on_shutdown.append(store.close)
    return app
