"""The operator's key never leaves the server process: not in the database, a page, an API answer or a log line.

A canary key is set in the environment for every provider; a full replay flow (reply runs and step runs)
runs through the dashboard, successes and every kind of failure included, with logging at DEBUG (the SDKs'
own debug logs too) and the server's stdout/stderr captured. Then everything is searched. The same flow
through the command line is tests/cli/test_canary.py.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from functools import partial
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from core.providers import dialect_names
from core.store import Store
from tests.replay.canary import assert_nowhere, dump_database
from tests.replay.conftest import CANARY_KEY
from tests.replay.replay_data import CONVERSATION, DAMAGED, ORIGINAL_TEXT, seed_store
from tests.replay.web_server import replay_app, serving
from tests.web.web_corpus import csrf_cookie
from web.devtools.stub_provider import Reply, StubServer
from web.replays.service import RunService

ECHOES = [
    Reply(text=f"basic {base64.b64encode(f'u:{CANARY_KEY}'.encode()).decode()}"),
    Reply(text="escaped " + "".join(f"\\u{ord(c):04x}" for c in CANARY_KEY)),
    Reply(text=f"quoted {quote(CANARY_KEY, safe='')} and cut {CANARY_KEY[:11]}"),
    Reply(status=500, raw_body="x" * 295 + CANARY_KEY),  # straddles the 300-character error detail
    Reply(status=200, raw_body="." * 9_995 + CANARY_KEY),  # straddles the 10,000 characters kept of a bad answer
    Reply(status=429, headers={"retry-after": CANARY_KEY}),
    Reply(status=307, headers={"location": f"http://127.0.0.1:9/v1?key={CANARY_KEY}"}),
]


def test_the_canary_key_appears_nowhere(
    tmp_path: Path,
    stub: StubServer,
    stub_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    for name, value in stub_env.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)
    db = str(tmp_path / "canary.db")
    seen: list[str] = []
    with Store.open(db) as store:
        seed_store(store, tmp_path)
        # The real os.environ, as `traceloupe serve` has it; a worker per dialect, so one model's three runs
        # (the slow ones that time out included) are in flight at once.
        service = RunService(store, timeout=1.5, workers=3)
        with (
            serving(replay_app(store, service), log_level="debug") as base,
            httpx.Client(base_url=base, timeout=60) as client,
        ):
            # Litestar's logging setup replaces the root handlers at start-up: capture with caplog again.
            root = logging.getLogger()
            if caplog.handler not in root.handlers:
                root.addHandler(caplog.handler)
            root.setLevel(logging.DEBUG)

            def get(path: str, **kw: object) -> httpx.Response:
                response = client.get(path, **kw)  # type: ignore[arg-type]
                seen.append(f"{response.headers}\n{response.text}")
                return response

            def post(kind: str, provider: str, model: str, conversation: str = CONVERSATION) -> str:
                """Start a run (``runs``) or a step run (``step-runs``) from the conversation's form."""
                path = f"/conversations/{conversation}"
                html = get(path).text
                if kind == "step-runs":
                    form = re.search(r"<form[^>]*data-steps-form[^>]*>(.*?)</form>", html, re.S)
                    assert form is not None
                    html = form.group(1)
                key = re.search(r'name="idempotency_key" value="([^"]+)"', html)
                assert key is not None
                fields = {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": key.group(1)}
                response = client.post(
                    f"{path}/{kind}",
                    data={**fields, "provider": provider, "model": model, "model_as_typed": "1"},
                    headers={"Origin": base, "HX-Request": "true"},
                )
                seen.append(f"{response.headers}\n{response.text}")
                found = re.search(rf'data-{kind[:-1]}="([0-9a-f]{{32}})"', response.text)
                assert found is not None, response.text
                return found.group(1)

            def finished(kind: str, started: str) -> str:
                """``started`` once its panel stops polling (the run has ended)."""
                deadline = time.monotonic() + 10
                while "hx-trigger" in get(f"/{kind}/{started}", headers={"HX-Request": "true"}).text:
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
                return started

            def start(kind: str, provider: str, model: str, conversation: str = CONVERSATION) -> str:
                """Start a run or a step run from the conversation's form; wait for it."""
                return finished(kind, post(kind, provider, model, conversation))

            rerun, step_run = partial(start, "runs"), partial(start, "step-runs")

            stub.state.script.append(Reply(text=f"echo {CANARY_KEY}"))  # a provider that echoes the key
            run_ids = [rerun(dialect, "model-x") for dialect in dialect_names()]
            stub.state.script.append(Reply(text="x", tool_calls=[{"name": "t"}], thought_signature="c2ln"))
            run_ids.append(rerun("gemini", "g"))
            for model in ("stub-error-500", "stub-error-429", "stub-slow-3", "stub-malformed"):
                posted = [post("runs", dialect, model) for dialect in ("openai", "anthropic", "gemini")]
                run_ids += [finished("runs", run_id) for run_id in posted]
            run_ids.append(rerun("openai", "m", DAMAGED))
            for echo in ECHOES:  # the key echoed encoded, cut by a limit, or in a header
                stub.state.script.append(echo)
                run_ids.append(rerun("openai", "m"))

            # Step runs from the dashboard: one whose answer echoes the key, one diverging, failures, a refusal.
            call = {"name": "weather", "arguments": {"city": "Lisbon"}}
            step_ids = []
            for dialect in ("openai", "anthropic", "gemini"):
                stub.state.script_steps(
                    "web-steps", [{"text": "", "tool_calls": [call]}, {"text": f"{ORIGINAL_TEXT} echo {CANARY_KEY}"}]
                )
                step_ids.append(step_run(dialect, "web-steps"))
                stub.state.script_steps("web-steps", [{"text": f"no tools, {CANARY_KEY}"}])
                step_ids.append(step_run(dialect, "web-steps"))
                step_ids.append(step_run(dialect, "stub-error-500"))
            step_ids.append(step_run("openai", "m", DAMAGED))
            for step_id in step_ids:
                get(f"/step-runs/{step_id}")
                get(f"/step-runs/{step_id}", params={"at": "1"})
                get(f"/api/step-runs/{step_id}")
            get("/runs/compare", params={"a": step_ids[0], "b": step_ids[1]})
            for run_id in run_ids:
                get(f"/runs/{run_id}")
                get(f"/api/runs/{run_id}")
            get(f"/conversations/{CONVERSATION}/replays")
            get(f"/api/conversations/{CONVERSATION}/runs")
            get("/runs/compare", params={"a": run_ids[0], "b": run_ids[1]})
            get("/runs/nope")
            get("/api/runs/nope")
            get("/schema")
            get("/")
        dump = dump_database(store)
        statuses = {store.get_run(r).status for r in run_ids}
        step_statuses = {store.get_step_run(r).status for r in step_ids}
    assert statuses == {"ok", "http_error", "rate_limited", "timeout", "malformed", "refused"}
    assert step_statuses == {"matched", "diverged", "failed", "refused"}
    out, err = capfd.readouterr()
    logs = caplog.text + "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)

    # The canary did travel: to the stub, in the auth header, once per provider call.
    assert sum(CANARY_KEY in " ".join(r.headers.values()) for r in stub.state.requests) == len(stub.state.requests) > 20
    assert "[redacted]" in dump  # the echoed key was replaced before it was stored
    assert len(seen) > 100 and "HTTP Request" in logs and "uvicorn" in logs.lower() + err.lower()
    assert_nowhere({"database": dump, "responses": "\n".join(seen), "logs": logs, "stdout": out, "stderr": err})
