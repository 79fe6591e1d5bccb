"""The demo shows step runs of its own: its agent turn replayed over the stub, one matched and one diverged."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from core.replay.endpoints import PROVIDER_ENV
from tests.web.web_html import live_content
from web.cli import main
from web.devtools import demo_data


def test_the_demo_records_a_matched_and_a_diverged_step_run_over_its_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for spec in PROVIDER_ENV.values():  # a real key in the shell must not be used: the demo points at its stub
        monkeypatch.setenv(spec.key_var, "sk-real-key-must-not-be-used")
        monkeypatch.delenv(spec.base_url_var, raising=False)
    monkeypatch.setattr(demo_data, "conversations", lambda long_records=2000: _small())
    seen: dict[str, Any] = {}

    def fake_run(app: Any, sock: Any, **kwargs: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            replays = client.get(f"/conversations/{demo_data.AGENT_STEPS}/replays").text
            seen["replays"] = replays
            ids = re.findall(r'data-step-run-row="(\w+)"', replays)
            seen["json"] = [client.get(f"/api/step-runs/{i}").json() for i in ids]
            seen["pages"] = [client.get(f"/step-runs/{i}").text for i in ids]

    monkeypatch.setattr("web.cli.serve.run_server", fake_run)
    db = tmp_path / "demo.db"
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0
    by_status = {r["status"]: r for r in seen["json"]}
    assert sorted(by_status) == ["diverged", "matched"]
    matched, diverged = by_status["matched"], by_status["diverged"]
    assert [s["verdict"] for s in matched["steps"]] == ["same", "same", "same", "same_final"]
    assert (diverged["diverged_at"], diverged["reason"]) == ("ag-a2", "different_arguments")
    assert all(s["tokens"]["input"] for r in seen["json"] for s in r["steps"])  # the stub's usage, through the SDK
    assert all(live_content(p) == [] for p in seen["pages"])
    assert "data-step-compare-form" in seen["replays"]
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0  # a kept demo database keeps its two runs
    assert len(seen["json"]) == 2


def _small() -> list[dict[str, Any]]:
    return demo_data.every_kind() + demo_data.incident() + demo_data.agent_steps()
