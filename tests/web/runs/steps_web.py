"""A served dashboard over the step-replay turn, and the helpers its tests share: read a form, post it, wait."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from core.store import Store
from tests.replay.replay_data import seed_store
from tests.replay.steps_data import CALLS, FINAL_TEXT, STEPS_CONVERSATION, seed_steps
from tests.replay.web_server import replay_app, serving, settled
from tests.web.web_corpus import csrf_cookie
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService

HX = {"HX-Request": "true"}
MODEL = "gpt-4.1"
"""A priced OpenAI model: the stub answers it by the script, genai-prices prices it."""


def identical() -> list[dict[str, Any]]:
    """The stub's script of a replay that takes the recorded path to the recorded answer."""
    return [*({"text": "", "tool_calls": calls} for calls in CALLS), {"text": FINAL_TEXT}]


def diverging_at_step_2() -> list[dict[str, Any]]:
    """Step 1 as recorded, step 2 books three seats instead of two."""
    book = {**CALLS[1][0], "arguments": {**CALLS[1][0]["arguments"], "seats": 3}}
    return [{"text": "", "tool_calls": CALLS[0]}, {"text": "", "tool_calls": [book]}]


@contextmanager
def dashboard(tmp_path: Path, env: dict[str, str], *, timeout: float = 5) -> Iterator[tuple[str, Store]]:
    """The dashboard over the steps conversation (and the replay one), on a free port."""
    with Store.open(str(tmp_path / "steps-web.db")) as store:
        seed_steps(store, tmp_path)
        seed_store(store, tmp_path)
        service = RunService(store, environ=lambda: env, timeout=timeout)
        with serving(replay_app(store, service)) as url:
            yield url, store


def step_form(client: httpx.Client, conversation: str = STEPS_CONVERSATION, *, nth: int = 0) -> dict[str, str]:
    """The fields of the page's ``nth`` Replay steps form as rendered (token, fresh key, turn)."""
    html = client.get(f"/conversations/{conversation}").text
    forms = re.findall(r"<form[^>]*data-steps-form[^>]*>(.*?)</form>", html, re.S)
    assert len(forms) > nth, html[:300]
    body = forms[nth]
    key = re.search(r'name="idempotency_key" value="([^"]+)"', body)
    turn = re.search(r'name="turn" value="([^"]+)"', body)
    assert key is not None and turn is not None
    return {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": key.group(1), "turn": turn.group(1)}


def post_steps(
    client: httpx.Client, fields: dict[str, str], conversation: str = STEPS_CONVERSATION, **headers: str
) -> httpx.Response:
    data = {"provider": "openai", "model": MODEL, **fields}
    return client.post(
        f"/conversations/{conversation}/step-runs", data=data, headers={"Origin": str(client.base_url), **headers}
    )


def step_run_id(html: str) -> str:
    found = re.search(r'data-step-run="([0-9a-f]{32})"', html)
    assert found is not None, html[:500]
    return found.group(1)


def wait_step_run(client: httpx.Client, run_id: str, timeout: float = 15) -> str:
    """The step run's final partial, once its live region stops polling."""
    return settled(client, f"/step-runs/{run_id}", timeout)


def stub_script(stub: StubServer, steps: list[dict[str, Any]], model: str = MODEL) -> None:
    stub.state.script_steps(model, steps)
