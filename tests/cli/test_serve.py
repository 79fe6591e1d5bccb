"""``traceloupe serve``: loopback by default, a public bind refused without an explicit flag, the limits passed on."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.web.web_corpus import csrf_cookie
from web.cli import main
from web.cli.serve import is_loopback
from web.serving import HeaderTimeoutH11Protocol
from web.settings import CSRF_COOKIE_PREFIX, Settings


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    monkeypatch.chdir(tmp_path)  # the default database, ./traceloupe.db, is made here and not in the checkout
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("web.cli.serve.listen", lambda host, port: socket.create_server(("127.0.0.1", 0)))
    monkeypatch.setattr("web.cli.serve.run_server", lambda app, sock, **kw: calls.append({"app": app, **kw}))
    return calls


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_refuses_public_bind_without_flag(host: str, served: list[dict[str, Any]], capsys: Any) -> None:
    assert main(["serve", "--host", host]) == 2
    assert served == []
    assert f"refusing to bind {host}" in capsys.readouterr().err


def test_public_bind_with_explicit_flag_needs_an_admin_account(
    served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    public = ["serve", "--host", "0.0.0.0", "--allow-remote", "--port", "8123"]
    assert main([*public, "--create"]) == 2
    assert served == []
    assert "needs an admin account first" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("a long admin password\n"))
    assert main(["users", "create", "ada", "--role", "admin"]) == 0
    assert main(public) == 0
    assert served[0]["host"] == "0.0.0.0" and served[0]["port"] == 8123
    from litestar.testing import TestClient

    with TestClient(served[0]["app"], base_url="http://127.0.0.1:8000") as client:
        response = client.get("/login")
        assert response.status_code == 200
        assert "secure" in response.headers["set-cookie"].lower()  # the CSRF cookie: on by default with the flag
        assert client.get("/", follow_redirects=False).status_code == 303  # a login first


def test_default_is_loopback_over_the_store(served: list[dict[str, Any]], tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"role": "user", "msg_type": "text", "content": "hello", "conversation_id": "c1"}\n')
    assert main(["import", str(trace), "--db", str(db)]) == 0
    assert main(["serve", "--db", str(db)]) == 0
    assert served[0]["host"] == "127.0.0.1" and served[0]["port"] == 8000
    assert served[0]["proxy_headers"] is False  # X-Forwarded-* never trusted
    from litestar.testing import TestClient

    with TestClient(served[0]["app"], base_url="http://127.0.0.1:8000") as client:
        assert "hello" in client.get("/").text


def test_database_from_the_environment(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACELOUPE_DATABASE_URL", str(tmp_path / "env.db"))
    assert main(["serve", "--create"]) == 0
    assert (tmp_path / "env.db").exists()


def test_bad_attachments_root_is_one_line(served: list[dict[str, Any]], tmp_path: Path, capsys: Any) -> None:
    assert main(["serve", "--db", str(tmp_path / "t.db"), "--attachments-root", str(tmp_path / "nope")]) == 2
    assert served == []
    assert "not a directory" in capsys.readouterr().err


STRONG_SECRET = "q7Zk2Vx9Lm4Rt8Wp1Ns6Bd3Hf5Jc0Gy-Ue_Ao"
"""A secret with the entropy of a random one (the weak ones are refused)."""

LOOPBACK_CASES = [
    ("127.0.0.1", True),
    ("127.0.0.2", True),
    ("localhost", True),
    ("::1", True),
    ("[::1]", True),
    ("0.0.0.0", False),
    ("10.0.0.1", False),
]


@pytest.mark.parametrize(("host", "expected"), LOOPBACK_CASES)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def _check_post(app: Any, token_from: Any) -> int:
    """Post the check form to ``app`` with the CSRF cookie and token that ``token_from`` served."""
    from litestar.testing import TestClient

    with TestClient(token_from, base_url="http://127.0.0.1:8000") as first:
        cookies = first.get("/check").cookies
        token = csrf_cookie(cookies)
        (name,) = [n for n in dict(cookies) if n.startswith(CSRF_COOKIE_PREFIX)]
    with TestClient(app, base_url="http://127.0.0.1:8000") as second:
        second.cookies.set(name, token)
        # A Re-run without an idempotency key: the form's complaint (400) once the token passed, 403 when it did not.
        headers = {"Origin": "http://127.0.0.1:8000"}
        return second.post("/conversations/c/runs", data={"_csrf_token": token}, headers=headers).status_code


def test_two_servers_on_one_database_accept_each_others_forms(
    served: list[dict[str, Any]], tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACELOUPE_SECRET", raising=False)
    db = str(tmp_path / "t.db")
    assert main(["serve", "--db", db, "--create"]) == 0
    assert main(["serve", "--db", db]) == 0  # a second process, or the first one restarted
    first, second = served[0]["app"], served[1]["app"]
    assert _check_post(second, token_from=first) == 400
    from core.store import Store

    with Store.open(db) as store:
        secret = store.shared_secret("csrf")
    out = capsys.readouterr()
    assert secret not in out.out + out.err


def test_servers_on_different_databases_refuse_each_others_forms(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACELOUPE_SECRET", raising=False)
    assert main(["serve", "--db", str(tmp_path / "a.db"), "--create"]) == 0
    assert main(["serve", "--db", str(tmp_path / "b.db"), "--create"]) == 0
    assert _check_post(served[1]["app"], token_from=served[0]["app"]) == 403


def test_the_secret_from_the_environment_signs_the_forms(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACELOUPE_SECRET", STRONG_SECRET)
    assert main(["serve", "--db", str(tmp_path / "a.db"), "--create"]) == 0
    assert main(["serve", "--db", str(tmp_path / "b.db"), "--create"]) == 0
    assert _check_post(served[1]["app"], token_from=served[0]["app"]) == 400


def test_a_short_secret_in_the_environment_is_refused_in_one_line(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("TRACELOUPE_SECRET", "short")
    assert main(["serve", "--db", str(tmp_path / "a.db"), "--create"]) == 2
    err = capsys.readouterr().err
    assert (
        served == [] and "TRACELOUPE_SECRET must be at least 32 characters" in err and "short" not in err.split(":")[-1]
    )


@pytest.mark.parametrize(
    "secret", [" " * 32, "s" * 40, "abcd" * 8, "", "   "], ids=["spaces", "one-letter", "abcd", "empty", "blank"]
)
def test_a_weak_or_empty_secret_in_the_environment_is_refused_in_one_line(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, secret: str
) -> None:
    monkeypatch.setenv("TRACELOUPE_SECRET", secret)
    assert main(["serve", "--db", str(tmp_path / "a.db"), "--create"]) == 2
    err = capsys.readouterr().err
    refusals = [line for line in err.splitlines() if "TRACELOUPE_SECRET" in line]
    assert served == [] and len(refusals) == 1 and refusals[0].startswith("traceloupe serve: ")
    assert (secret.strip() or "<none>") not in err


def test_workers_must_be_positive(served: list[dict[str, Any]], capsys: Any) -> None:
    assert main(["serve", "--workers", "0"]) == 2  # argparse's refusal: one line naming the flag and its range
    assert served == [] and "--workers is between 1 and 64, not 0" in capsys.readouterr().err


def test_the_uvicorn_factory_serves_the_database_from_the_environment_with_its_shared_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web.processes import app_from_env

    monkeypatch.delenv("TRACELOUPE_SECRET", raising=False)
    monkeypatch.setenv("TRACELOUPE_DATABASE_URL", str(tmp_path / "env.db"))
    monkeypatch.setenv("TRACELOUPE_ALLOWED_HOSTS", "traces.example, Other.example")
    first, second = app_from_env(), app_from_env()  # two uvicorn workers
    assert _check_post(second, token_from=first) == 400
    from litestar.testing import TestClient

    with TestClient(first, base_url="http://traces.example") as client:
        assert client.get("/").status_code == 200
    with TestClient(first, base_url="http://elsewhere.example") as client:
        assert client.get("/").status_code == 400


def test_serve_passes_the_limits_to_uvicorn(served: list[dict[str, Any]], tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    argv = ["serve", "--db", db, "--create", "--max-connections", "50", "--build-seconds", "7"]
    assert main([*argv, "--build-concurrency", "2"]) == 0
    options = served[0]
    assert options["limit_concurrency"] == 50
    assert issubclass(options["http"], HeaderTimeoutH11Protocol)
    assert options["http"].header_timeout == Settings().header_timeout_seconds
    assert options["h11_max_incomplete_event_size"] == 16 * 1024
    assert options["proxy_headers"] is False and options["server_header"] is False


def test_the_uvicorn_factory_with_allow_remote_needs_an_admin_then_a_login_and_secure_cookies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from litestar.testing import TestClient

    from core.accounts import Accounts, Role
    from core.store import Store
    from web.processes import app_from_env

    db = str(tmp_path / "env.db")
    monkeypatch.delenv("TRACELOUPE_SECRET", raising=False)
    monkeypatch.delenv("TRACELOUPE_SECURE_COOKIES", raising=False)
    monkeypatch.setenv("TRACELOUPE_DATABASE_URL", db)
    monkeypatch.setenv("TRACELOUPE_ALLOW_REMOTE", "1")
    with pytest.raises(SystemExit) as refused:  # as serve --allow-remote: nobody could log in
        app_from_env()
    assert "needs an admin account first" in str(refused.value) and "traceloupe users create" in str(refused.value)
    with Store.open(db) as store:
        Accounts(store).create("ada", Role.ADMIN, "a long admin password")
    with TestClient(app_from_env(), base_url="https://127.0.0.1:8000") as client:
        response = client.get("/login")
        assert "secure" in response.headers["set-cookie"].lower()  # on by default with remote access, as in serve
        assert client.get("/", follow_redirects=False).status_code == 303


def test_the_uvicorn_factory_takes_secure_cookies_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from litestar.testing import TestClient

    from web.processes import app_from_env

    monkeypatch.delenv("TRACELOUPE_SECRET", raising=False)
    monkeypatch.delenv("TRACELOUPE_ALLOW_REMOTE", raising=False)
    monkeypatch.setenv("TRACELOUPE_DATABASE_URL", str(tmp_path / "env.db"))
    monkeypatch.setenv("TRACELOUPE_SECURE_COOKIES", "1")  # a loopback server behind an HTTPS proxy
    with TestClient(app_from_env(), base_url="https://127.0.0.1:8000") as client:
        assert "secure" in client.get("/login").headers["set-cookie"].lower()
    monkeypatch.setenv("TRACELOUPE_SECURE_COOKIES", "maybe")
    with pytest.raises(ValueError, match="TRACELOUPE_SECURE_COOKIES"):
        app_from_env()
