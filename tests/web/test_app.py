"""The app factory: templates, htmx vendoring and config, static files, error pages, the check upload."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import InputError
from core.reader import read_bytes
from tests.web.web_corpus import BASE_URL, csrf_cookie
from tests.web.web_html import parse
from web.app import HTMX_CONFIG, jinja_environment
from web.settings import HTMX_VERSION, STATIC_DIR, Settings


def test_jinja_env_autoescape_on(app: Litestar) -> None:
    """The environment actually used by the app escapes: checked on the engine and by rendering."""
    engine = app.template_engine
    env = engine.engine  # type: ignore[union-attr]
    assert env.autoescape is True
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert jinja_environment(Settings()).autoescape is True


def test_no_safe_filter_or_markup_in_templates() -> None:
    for path in Path(Settings().templates_dir).rglob("*.html"):
        text = path.read_text()
        assert "|safe" not in text.replace(" ", ""), path
        assert "autoescape false" not in text, path
    for path in Path("web").rglob("*.py"):
        text = path.read_text()
        assert "Markup(" not in text and "from_string(" not in text, path


def test_htmx_vendored_file_matches_readme() -> None:
    name = f"htmx-{HTMX_VERSION}.min.js"
    digest = hashlib.sha256((STATIC_DIR / "vendor" / name).read_bytes()).hexdigest()
    readme = (STATIC_DIR / "vendor" / "README.md").read_text()
    assert re.search(
        rf"`{re.escape(name)}` \| `htmx.org` \(npm\) \| {re.escape(HTMX_VERSION)} \|.*\| `{digest}` \|", readme
    )
    assert HTMX_VERSION.startswith("2.")


def test_pages_load_htmx_and_its_config(client: TestClient[Litestar]) -> None:
    page = parse(client.get("/").text)
    scripts = [el.get("src") for el in page.elements if el.tag == "script"]
    # Linked by content-hashed name (web/assets.py): the vendored release, one script.
    htmx = re.compile(rf"/static/vendor/htmx-{re.escape(HTMX_VERSION)}\.min\.[0-9a-f]{{12}}\.js")
    assert [s for s in scripts if htmx.fullmatch(s or "")]
    meta = next(el for el in page.elements if el.tag == "meta" and el.get("name") == "htmx-config")
    config = json.loads(meta.get("content") or "")
    assert config["selfRequestsOnly"] is True
    assert config["allowEval"] is False
    assert config["allowScriptTags"] is False
    assert config["historyCacheSize"] == 0
    assert config == HTMX_CONFIG


def test_static_files_served(client: TestClient[Litestar]) -> None:
    js = client.get(f"/static/vendor/htmx-{HTMX_VERSION}.min.js")
    assert js.status_code == 200
    assert "javascript" in js.headers["content-type"]
    assert client.get("/static/app.css").status_code == 200
    assert client.get("/static/../web/app.py").status_code == 404


def test_404_html_in_layout(client: TestClient[Litestar]) -> None:
    response = client.get("/no/such/page")
    assert response.status_code == 404
    page = parse(response.text)
    assert any(el.tag == "header" and el.get("class") == "topbar" for el in page.elements)
    assert "404 Not Found" in page.text
    assert "/no/such/page" in page.text


def test_404_json_for_api_clients(client: TestClient[Litestar]) -> None:
    response = client.get("/no/such/page", headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.json()["status_code"] == 404
    assert client.get("/api/nothing").json()["status_code"] == 404


def test_unknown_conversation_says_so(client: TestClient[Litestar]) -> None:
    response = client.get("/conversations/nope")
    assert response.status_code == 404
    assert "No conversation with id 'nope'" in parse(response.text).text
    assert "No conversation with id" in client.get("/conversations/nope", headers={"Accept": "application/json"}).text


def test_bad_query_is_400_in_layout(client: TestClient[Litestar]) -> None:
    response = client.get("/conversations/c-every?offset=-5")
    assert response.status_code == 400
    assert "400 Bad Request" in parse(response.text).text


def test_500_hides_internals() -> None:
    from tests.web.web_corpus import temp_store
    from web.app import create_app

    store = temp_store()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internal detail")

    store.list_conversations = broken  # type: ignore[method-assign]
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as client:
        response = client.get("/")
    assert response.status_code == 500
    assert "secret internal detail" not in response.text
    assert "Something went wrong" in response.text


def test_index_lists_conversations(client: TestClient[Litestar]) -> None:
    page = parse(client.get("/").text)
    rows = [el.get("data-conversation-id") for el in page.elements if el.tag == "tr" and el.get("data-conversation-id")]
    assert set(rows) == {"c-every", "c-long"}
    assert "plain text" in page.text


def _check(client: TestClient[Litestar], body: bytes, name: str) -> tuple[int, str]:
    token = csrf_cookie(client.get("/check").cookies)
    response = client.post("/check", files={"data": (name, body)}, data={"_csrf_token": token})
    return response.status_code, parse(response.text).text


def test_check_upload_reports_damaged_records(client: TestClient[Litestar]) -> None:
    lines = [
        {
            "role": "user",
            "msg_type": "text",
            "content": "hi",
            "msg_id": "u1",
            "conversation_id": "c",
            "intermediate_trace": {"records": [{"role": "assistant", "content": "lost", "msg_id": "a1"}]},
        },
        {"role": "user", "content": "bare", "msg_id": "u2", "conversation_id": "c"},
    ]
    status, text = _check(client, b"\n".join(json.dumps(x).encode() for x in lines), "t.jsonl")
    assert status == 200
    assert "2 messages · 1 trace records · 1 conversation" in " ".join(text.split())
    assert "t.jsonl:1 $.intermediate_trace.records[0]" in text
    assert "a1" in text and "AssistantTextMessage" in text and "助理消息需要子类实现转换过程" in text
    assert "t.jsonl:2 $" in text and "TextMessage" in text


def test_check_upload_names_file_line_and_path(client: TestClient[Litestar]) -> None:
    """The page shows exactly the reader's message (the CLI's): file, line, JSON path, reason."""
    good = b'{"role": "system", "content": "x"}\n'
    bad = b'{"role": "user", "msg_type": "nope", "content": "x"}\n'
    with pytest.raises(InputError) as expected:
        list(read_bytes(good + bad, source="bad.jsonl"))
    status, text = _check(client, good + bad, "bad.jsonl")
    assert status == 400
    assert str(expected.value).startswith("bad.jsonl:2 at $.msg_type: ")
    assert str(expected.value) in text


def _rows(html: str) -> list[str]:
    return [el.get("data-conversation-id") or "" for el in parse(html).elements if el.has("data-conversation-id")]


def test_list_search_filter_and_keyset_pages() -> None:
    from core import MESSAGE_ADAPTER
    from tests.web.web_corpus import make_app

    msgs = [
        MESSAGE_ADAPTER.validate_python(
            {
                "role": "user",
                "msg_type": "text",
                "content": f"topic {i % 3} number {i}",
                "conversation_id": f"c{i:03}",
                "create_ts": 1_700_000_000_000 + i * 1000,
            }
        )
        for i in range(120)
    ]
    (
        msgs.append(
            MESSAGE_ADAPTER.validate_python(
                {"role": "user", "content": "bare", "conversation_id": "broken", "create_ts": 1}
            )
        ),
    )
    with TestClient(make_app(msgs), base_url=BASE_URL) as client:
        first = client.get("/").text
        assert _rows(first)[:2] == ["c119", "c118"] and len(_rows(first)) == 50
        nxt = next(el for el in parse(first).elements if el.has("data-next-list")).get("href") or ""
        assert nxt.startswith("/?after=")  # the store's opaque keyset cursor
        second = _rows(client.get(nxt).text)
        assert second[0] == "c069" and len(second) == 50
        third = client.get(
            next(el for el in parse(client.get(nxt).text).elements if el.has("data-next-list")).get("href") or ""
        ).text
        assert _rows(third)[-1] == "broken" and not any(el.has("data-next-list") for el in parse(third).elements)

        found = client.get("/?q=TOPIC+1+number+10").text  # case-insensitive, over message content
        assert _rows(found) == ["c109", "c106", "c103", "c100", "c010"]
        assert 'value="TOPIC 1 number 10"' in found  # the URL's state is back in the form
        assert _rows(client.get("/?damaged=1").text) == ["broken"]
        assert _rows(client.get("/?kind=user").text) == ["broken"]  # contains a damaged user record
        assert len(_rows(client.get("/?kind=user:text").text)) == 50
        assert _rows(client.get("/?runs=1").text) == []
        assert _rows(client.get("/?sort=oldest").text)[:2] == ["broken", "c000"]
        nothing = client.get("/?q=%3Cscript%3E").text
        assert any(el.has("data-no-match") for el in parse(nothing).elements)
        assert client.get("/?after=garbage").status_code == 400  # not one of our cursors: said, not ignored
        assert client.get("/?kind=nope").status_code == 400
        assert client.get("/?sort=id;drop").status_code == 400
        assert client.get("/?q=" + "x" * 500).status_code == 400
