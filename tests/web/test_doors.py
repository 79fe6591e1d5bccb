"""Every door of the dashboard refuses what the database cannot hold, with a 4xx and never a 500, on both backends.

Path ids that decode to a lone surrogate or U+0000, integers past any column's range, strings with
U+0000 or megabytes long: each is refused where it comes in, before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.providers.registry import dialect_names
from core.store import SORTS, Store
from tests.replay.steps_data import STEPS_CONVERSATION, seed_steps
from tests.store.store_pg import BACKENDS, empty_store_url
from tests.store.test_store_run_lines import nested_text, run_line
from tests.web.web_corpus import BASE_URL, csrf_cookie
from web.app import create_app
from web.list_query import KIND_FILTERS
from web.replays.service import RunService
from web.settings import CSRF_COOKIE_PREFIX, Settings

CONVERSATION = "c1"
LINES = (
    '{"role": "user", "msg_type": "text", "conversation_id": "c1", "msg_id": "u1", "create_ts": 1, "content": "hi"}',
    '{"role": "assistant", "msg_type": "text", "conversation_id": "c1", "msg_id": "a1", "create_ts": 2, '
    '"content": "hello"}',
)
LONE_SURROGATE = "~ED~A0~80"  # U+D800 as UTF-8 bytes (what surrogatepass would decode)
NUL = "~00"
ORIGIN = {"Origin": BASE_URL}
KEY = "k" * 24
QUERY = "?what=damaged&left=openai&right=openai&side=left&n=0&cause=text&offset=0&pointer=%2Fcontent"
"""What every GET route with a path id needs besides it (each takes the parameters it knows)."""
ENV = {"OPENAI_API_KEY": "sk-test-" + "x" * 24, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
"""OpenAI has a key (an unreachable loopback base URL): a form gets as far as the database."""


@pytest.fixture(scope="module", params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One seeded store per backend for the module: every door here refuses before writing, and what a test does
    save (an upload's good files, a suite) has a name of its own."""
    folder = tmp_path_factory.mktemp("doors")
    with empty_store_url(request.param, folder) as url, Store.open(url) as made:
        path = folder / "c1.jsonl"
        path.write_text("\n".join(LINES) + "\n")
        made.import_path(path)
        seed_steps(made, folder)
        yield made


@pytest.fixture(scope="module")
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    service = RunService(store, environ=lambda: ENV, timeout=1)
    with TestClient(create_app(Settings(), store, runs=service), base_url=BASE_URL) as c:
        yield c


def _token(client: TestClient[Litestar]) -> str:
    if not any(name.startswith(CSRF_COOKIE_PREFIX) for name in dict(client.cookies)):
        assert client.get("/check").status_code == 200
    return csrf_cookie(client.cookies)


def _id_routes(app: Litestar) -> list[tuple[str, str]]:
    """(method, path template) of every route with a ``:str`` path parameter (an id, a provider, a digest)."""
    found = []
    for route in app.routes:
        if not re.search(r"\{\w+:str\}", route.path) or route.path.startswith("/schema"):
            continue
        found += [(m, route.path) for m in sorted(getattr(route, "methods", ())) if m in ("GET", "POST")]
    return found


@pytest.mark.parametrize("bad", [LONE_SURROGATE, NUL], ids=["lone-surrogate", "nul"])
def test_a_path_id_that_decodes_to_a_lone_surrogate_or_nul_is_404_on_every_route(
    client: TestClient[Litestar], bad: str
) -> None:
    token = _token(client)
    routes = _id_routes(client.app)
    assert len(routes) >= 13
    for method, template in routes:
        path = re.sub(r"\{(\w+):str\}", f"x{bad}", template)
        if method == "GET":
            response = client.get(path + QUERY)
        else:
            response = client.post(path, data={"_csrf_token": token, "idempotency_key": KEY}, headers=ORIGIN)
        assert response.status_code == 404, (method, template, response.status_code)


def _post_steps(client: TestClient[Litestar], **fields: str) -> int:
    data = {"_csrf_token": _token(client), "provider": "openai", "model": "gpt-4o", "idempotency_key": KEY}
    data.update(fields)
    return client.post(f"/conversations/{STEPS_CONVERSATION}/step-runs", data=data, headers=ORIGIN).status_code


@pytest.mark.parametrize("value", [str(2**31), str(2**63), str(2**64), "-1", "0"])
def test_max_steps_out_of_range_is_refused_with_400(client: TestClient[Litestar], value: str) -> None:
    assert _post_steps(client, max_steps=value) == 400


@pytest.mark.parametrize("value", ["1e400", "nan", "-1", "1e300"])
def test_max_cost_out_of_range_is_refused_with_400(client: TestClient[Litestar], value: str) -> None:
    assert _post_steps(client, max_cost=value) == 400


@pytest.mark.parametrize(
    "field,value",
    [
        ("model", "gpt-4o\x00"),
        ("model", "gpt-" + "x" * 3_000_000),
        ("provider", "openai\x00"),
        ("idempotency_key", "k" * 20 + "\x00"),
        ("idempotency_key", "k" * 5000),
        ("turn", "su-1\x00"),
        ("upto", "a1\x00"),
    ],
    ids=["model-nul", "model-3mb", "provider-nul", "key-nul", "key-5000", "turn-nul", "upto-nul"],
)
def test_a_replay_form_string_with_nul_or_too_long_is_refused_with_400_and_nothing_stored(
    client: TestClient[Litestar],
    store: Store,
    field: str,
    value: str,
) -> None:
    routes = {"runs": CONVERSATION, "step-runs": STEPS_CONVERSATION}
    for route, cid in routes.items():
        if (field, route) in (("turn", "runs"), ("upto", "step-runs")):
            continue
        data = {"_csrf_token": _token(client), "provider": "openai", "model": "gpt-4o", "idempotency_key": KEY}
        data.update({"model_as_typed": "1", field: value})
        assert client.post(f"/conversations/{cid}/{route}", data=data, headers=ORIGIN).status_code == 400, route
    assert not store.list_runs(None, limit=10)[0]
    assert not store.list_step_runs(None, limit=10)


@pytest.mark.parametrize("name", ["nul\x00name", "n" * 10_000, "line\nbreak"], ids=["nul", "10k", "newline"])
def test_a_suite_name_with_nul_or_too_long_is_refused_with_400_and_no_suite_saved(
    client: TestClient[Litestar], name: str
) -> None:
    data = {"_csrf_token": _token(client), "name": name, "q": "hi"}
    assert client.post("/suites", data=data, headers=ORIGIN, follow_redirects=False).status_code == 400
    assert "nul" not in client.get("/suites").text.split("<main", 1)[-1]


@pytest.mark.parametrize(
    "field,value",
    [("concurrency", str(2**63)), ("max_cost", "1e400"), ("model", "m\x00"), ("baseline", "b" * 5000)],
)
def test_a_suite_run_form_out_of_range_is_refused_with_400(
    client: TestClient[Litestar], field: str, value: str
) -> None:
    token = _token(client)
    saved = {"_csrf_token": token, "name": f"s-{field}", "q": "hi"}
    assert client.post("/suites", data=saved, headers=ORIGIN, follow_redirects=False).status_code == 303
    data = {"_csrf_token": token, "provider": "openai", "model": "gpt-4o", "idempotency_key": KEY}
    data[field] = value
    assert client.post(f"/suites/s-{field}/runs", data=data, headers=ORIGIN, follow_redirects=False).status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        f"/api/conversations/{CONVERSATION}?offset={2**63}",
        f"/api/conversations/{CONVERSATION}?offset={2**64}",
        f"/conversations/{CONVERSATION}?offset={2**63}",
    ],
)
def test_an_integer_query_past_its_range_is_400(client: TestClient[Litestar], path: str) -> None:
    assert client.get(path).status_code == 400


def test_check_with_two_file_parts_is_one_400_line(client: TestClient[Litestar]) -> None:
    body = ("\n".join(LINES) + "\n").encode()
    files = [("data", ("a.jsonl", body)), ("data", ("b.jsonl", body))]
    response = client.post("/check", files=files, data={"_csrf_token": _token(client)}, headers=ORIGIN)
    assert response.status_code == 400
    assert "one file" in response.text


def test_trace_is_405_with_an_allow_header(client: TestClient[Litestar]) -> None:
    for path in ("/", "/api/conversations", f"/api/conversations/{CONVERSATION}"):
        response = client.request("TRACE", path)
        assert response.status_code == 405
        assert "GET" in response.headers.get("allow", ""), path


def _query_enums(schema: dict[str, Any], path: str) -> dict[str, list[Any]]:
    params = schema["paths"][path]["get"].get("parameters", [])
    return {p["name"]: p["schema"].get("enum") for p in params if p["in"] == "query"}


def test_the_api_schema_lists_exactly_the_values_the_code_takes(client: TestClient[Litestar]) -> None:
    schema = client.get("/schema/openapi.json").json()
    listing = _query_enums(schema, "/api/conversations")
    assert listing["kind"] == ["", *KIND_FILTERS]
    assert listing["sort"] == list(SORTS)
    diff = _query_enums(schema, "/api/conversations/{conversation_id}/diff")
    assert diff["left"] == diff["right"] == dialect_names()
    for kind in ("", *KIND_FILTERS):
        assert client.get(f"/api/conversations?kind={quote(kind)}").status_code == 200
    assert client.get("/api/conversations?kind=not-a-kind").status_code == 400


@pytest.mark.parametrize("hostile", ["nested", "long-key", "nul"])
def test_an_upload_with_one_hostile_run_line_file_stores_the_others_and_says_one_error_line(
    client: TestClient[Litestar],
    store: Store,
    hostile: str,
) -> None:
    good = [(f"good{i}.jsonl", _conversation(f"up{i}-{hostile}")) for i in range(2)]
    bad_fields: dict[str, Any] = {
        "nested": {"request_body": {"__body__": 0}},
        "long-key": {"idempotency_key": "k" * 5000},
        "nul": {"error": "x\x00" if store.backend == "postgresql" else "x" * 600, "up_to_msg_id": "m" * 600},
    }[hostile]
    line = run_line(conversation_id="c1", **bad_fields).replace(b'{"__body__":0}', nested_text(1010).encode())
    files = [("files", (name, body)) for name, body in good[:1]]
    files += [("files", ("bad.jsonl", _conversation(f"upbad-{hostile}") + line))]
    files += [("files", (name, body)) for name, body in good[1:]]
    response = client.post("/import", files=files, data={"_csrf_token": _token(client)}, headers=ORIGIN)
    assert response.status_code == 400
    assert response.text.count("nothing from this file") == 1 and "bad.jsonl" in response.text
    stored = {c.conversation_id for c in store.list_conversations().items}
    assert {f"up0-{hostile}", f"up1-{hostile}"} <= stored and f"upbad-{hostile}" not in stored
    assert store.counts()["runs"] == 0


def _conversation(cid: str) -> bytes:
    return (LINES[0].replace('"c1"', f'"{cid}"') + "\n").encode()
