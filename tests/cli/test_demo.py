"""``traceloupe demo`` and its data set: every kind, the incident, the long trace, the hostile content, the stub."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.integrity import find_damage
from core.replay.endpoints import PROVIDER_ENV, endpoint_for
from tests.web.web_html import live_content, parse
from web.cli import main
from web.cli.demo import PLACEHOLDER_KEY
from web.devtools import demo_data
from web.timeline import CARD_KINDS, Timeline


def test_every_card_kind_is_in_the_demo() -> None:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    cards = Timeline(messages).page(0, 1000).cards
    assert {c.kind for c in cards} == set(CARD_KINDS)
    assert not any(c.damage for c in cards)


def test_incident_long_trace_and_hostile_content() -> None:
    incident = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.incident()]
    damaged = [d.msg_id for m in incident for d in find_damage(m)]
    assert damaged == ["inc-a1", "inc-a2", "inc-u-fwd"]  # written by the pre-fix schema: msg_type lost
    (long,) = demo_data.long_trace()
    assert len(long["intermediate_trace"]["records"]) == 2000
    hostile = json.dumps(demo_data.hostile())
    for needle in ("<script>", "onerror=", "javascript:", "JaVaScRiPt:", demo_data.FAKE_KEY, "hx-post"):
        assert needle in hostile
    assert max(len(r["tool_reses"][0]["result"]) for r in demo_data.hostile()[0]["intermediate_trace"]["records"]
               if r["role"] == "tool") > 1_000_000  # fmt: skip


def test_demo_builds_serves_and_points_replays_at_the_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for spec in PROVIDER_ENV.values():  # restored after the test
        monkeypatch.setenv(spec.key_var, "sk-real-key-must-not-be-used")
        monkeypatch.delenv(spec.base_url_var, raising=False)
    seen: dict[str, Any] = {}

    def fake_run(app: Any, sock: Any, **kwargs: Any) -> None:
        seen.update(kwargs)
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            home = client.get("/")
            seen["rows"] = [
                el.get("data-conversation-id") for el in parse(home.text).elements if el.has("data-conversation-id")
            ]
            hostile = client.get(f"/conversations/{demo_data.HOSTILE}")
            seen["hostile"] = (hostile.status_code, live_content(hostile.text), len(hostile.content))
            seen["image"] = client.get("/attachments/photos/tram.png?inline=1").status_code
        endpoint = endpoint_for("openai")
        assert endpoint is not None
        seen["endpoint"] = endpoint
        request = urllib.request.Request(
            f"{endpoint.base_url}/chat/completions",
            data=json.dumps({"model": "demo", "messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"content-type": "application/json", "authorization": f"Bearer {endpoint.key}"},
        )
        with urllib.request.urlopen(request) as response:  # the stub on loopback
            seen["reply"] = json.loads(response.read())

    monkeypatch.setattr("web.cli.serve.run_server", fake_run)
    db = tmp_path / "traceloupe-demo.db"
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0
    assert db.exists() and (tmp_path / "traceloupe-demo-attachments" / "photos" / "tram.png").exists()
    assert seen["host"] == "127.0.0.1" and seen["port"] > 0
    assert {demo_data.EVERY_KIND, demo_data.INCIDENT, demo_data.LONG, demo_data.HOSTILE} <= set(seen["rows"])
    status, problems, size = seen["hostile"]
    assert status == 200 and problems == [] and size < 1_000_000  # the 2 MB field is cut
    assert seen["image"] == 200
    assert seen["endpoint"].key == PLACEHOLDER_KEY and seen["endpoint"].base_url.startswith("http://127.0.0.1:")
    assert seen["reply"]["choices"][0]["message"]["content"] == "This is the stub provider's reply."
    err = capsys.readouterr().err
    assert "Traceloupe demo on http://127.0.0.1:" in err and "sk-real-key" not in err
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0  # a kept demo database is reused as it is


def test_runs_are_read_only_data_on_the_list_and_the_api(tmp_path: Path) -> None:
    from core.store import Store
    from web.app import create_app
    from web.settings import Settings

    demo = demo_data.build(tmp_path, long_records=20)
    with Store.open(str(demo.db)) as store, TestClient(create_app(Settings(), store), base_url="http://127.0.0.1") as c:
        runs = c.get("/api/runs").json()
        assert sorted(r["status"] for r in runs["runs"]) == ["http_error", "ok"]
        assert "request_body" not in runs["runs"][0]
        assert "request_body" in c.get("/api/runs?bodies=1").json()["runs"][0]
        mine = c.get(f"/api/conversations/{demo_data.EVERY_KIND}/runs").json()["runs"]
        assert [(r["provider"], r["status"], r["usage"]["total_tokens"]) for r in mine] == [("openai", "ok", 16)]
        assert c.get("/api/conversations/nope/runs").status_code == 404
        with_runs = parse(c.get("/?runs=1").text)
        rows = [el.get("data-conversation-id") for el in with_runs.elements if el.has("data-conversation-id")]
        assert sorted(rows) == sorted([demo_data.EVERY_KIND, demo_data.INCIDENT])
        assert c.post("/api/runs").status_code in (403, 405)  # nothing here creates a run
