"""The diff page and API: both bodies side by side, every change marked in both panes and grouped by cause."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.providers.diff_causes import CAUSES
from tests.web.web_corpus import BASE_URL, temp_store
from tests.web.web_html import live_content, parse
from web import masking
from web.app import create_app
from web.bodies.diffs import diff_command
from web.cli import main
from web.devtools import demo_data
from web.settings import Settings

EK = f"/conversations/{demo_data.EVERY_KIND}"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind() + demo_data.incident()]
    with TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL) as c:
        yield c


def test_changes_are_marked_in_both_panes_and_grouped_by_cause(client: TestClient[Litestar]) -> None:
    response = client.get(f"{EK}/diff?left=openai&right=anthropic")
    assert response.status_code == 200
    html = response.text
    page = parse(html)
    api = client.get(f"/api{EK}/diff?left=openai&right=anthropic").json()
    changes = api["changes"]
    assert changes
    causes = {el.get("data-cause") for el in page.elements if el.has("data-cause")}
    assert {"system", "tools", "reasoning", "modality"} <= causes
    assert set(api["causes"]) <= causes
    # The system prompt moved out of the message list into a top-level field: both sides under "system".
    system = [c for c in changes if c["cause"] == "system"]
    assert {(c["op"], c["pointer"]) for c in system} >= {("add", "/system"), ("remove", "/messages/0")}
    # Reasoning openai drops (ek-a4's, warned on both sides); tool calls that become tool_use blocks.
    assert any(c["cause"] == "reasoning" and c["pointer"].startswith("/messages/") for c in changes)
    assert any(c["cause"] == "tools" and "tool_use" in str(c.get("right")) for c in changes)
    # Every change has its node in the pane(s) it concerns: L<n> left (removed, changed), R<n> right (added, changed).
    ids = {el.get("id") for el in page.elements if el.get("id")}
    for n, change in enumerate(changes):
        if change["op"] != "add":
            assert f"L{n}" in ids, change
        if change["op"] != "remove":
            assert f"R{n}" in ids, change
    marks = {el.get("class") for el in page.elements if el.has("data-ptr") and el.get("id")}
    assert {"mk d-add", "mk d-remove", "mk d-change"} <= marks
    # Turns are paired by the message they came from, not by index: ek-u1's turn is compared with ek-u1's.
    assert not any(c["pointer"] == "/messages/1/role" for c in changes)
    # Each group explains itself.
    assert "Providers put the system prompt in different places" in page.text
    assert live_content(html) == []


def test_same_provider_is_identical(client: TestClient[Litestar]) -> None:
    page = parse(client.get(f"{EK}/diff?left=gemini&right=gemini").text)
    assert any(el.has("data-no-difference") for el in page.elements)
    assert client.get(f"/api{EK}/diff?left=gemini&right=gemini").json()["changes"] == []


def test_a_damaged_conversation_says_why_and_offers_the_repair(client: TestClient[Litestar]) -> None:
    conv = f"/conversations/{demo_data.INCIDENT}"
    page = parse(client.get(f"{conv}/diff?left=openai&right=zhipu").text)
    assert any(el.has("data-contract-error") for el in page.elements)
    repair = next(el for el in page.elements if el.has("data-repair-link")).get("href") or ""
    assert repair.startswith(f"{conv}/diff?") and "repair=1" in repair
    fixed = client.get(repair)
    assert fixed.status_code == 200 and any(el.has("data-diff-summary") for el in parse(fixed.text).elements)
    assert client.get(f"/api{conv}/diff?left=openai&right=zhipu").status_code == 422


def test_unknown_side_is_a_404(client: TestClient[Litestar]) -> None:
    assert client.get(f"{EK}/diff?left=openai&right=nope").status_code == 404
    assert client.get(f"/api{EK}/diff?left=nope&right=openai").status_code == 404


# Every demo conversation that has a request (the incident's is refused), against pairs that differ in every way:
# system placement, tool shapes, reasoning, modalities, merged roles, and two OpenAI-compatible dialects.
AGREEMENT_CONVERSATIONS = (demo_data.EVERY_KIND, demo_data.HOSTILE, demo_data.LONG, "demo-translate")
AGREEMENT_PAIRS = (("openai", "anthropic"), ("gemini", "openai-responses"), ("anthropic", "zhipu"), ("zhipu", "doubao"))


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TestClient[Litestar]]:
    """The demo conversations (a shorter long trace) as a JSONL file for the CLI and in a store for the dashboard."""
    records = demo_data.conversations(long_records=300)
    path = tmp_path_factory.mktemp("diff") / "demo.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in records]
    return path, TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL)


_GROUP_HEADING = re.compile(r"^# ([^:]+): (\d+) changes?")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["diff", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("conversation", AGREEMENT_CONVERSATIONS)
@pytest.mark.parametrize(("left", "right"), AGREEMENT_PAIRS)
def test_cli_api_and_page_count_the_same_differences_by_cause(
    demo_file: tuple[Path, TestClient[Litestar]],
    capsys: pytest.CaptureFixture[str],
    conversation: str,
    left: str,
    right: str,
) -> None:
    path, client = demo_file
    argv = (str(path), "--conversation", conversation, "--left", left, "--right", right)
    code, out = _cli(capsys, *argv, "--json")
    cli = json.loads(out)
    api = client.get(f"/api/conversations/{conversation}/diff?left={left}&right={right}").json()
    # The same changes, pointers, values and causes, in the same order; the API masks secrets, the local CLI does not.
    assert masking.mask_value(cli) == api
    assert code == (1 if api["changes"] else 0)
    assert sum(api["causes"].values()) == len(api["changes"])
    # The page: the heading's total and each cause's count.
    with client:
        page = parse(client.get(f"/conversations/{conversation}/diff?left={left}&right={right}").text)
    (heading,) = [el for el in page.elements if el.has("data-differences")]
    assert int(heading.get("data-differences") or -1) == len(api["changes"])
    shown = {el.get("data-cause"): int(el.get("data-changes") or -1) for el in page.elements if el.has("data-changes")}
    assert {cause: n for cause, n in shown.items() if n} == api["causes"]
    # The CLI's text: the same groups with the same counts, and one line per change.
    _, text = _cli(capsys, *argv)
    lines = text.splitlines()
    assert lines[2] == f"{len(api['changes'])} difference{'s' * (len(api['changes']) != 1)}, by cause"
    headed = {m[1]: int(m[2]) for m in map(_GROUP_HEADING.match, lines) if m}
    assert {title: n for title, n in headed.items() if n} == {CAUSES[c][0]: n for c, n in api["causes"].items()}
    assert sum(1 for line in lines[3:] if line[:2] in ("+ ", "- ", "~ ")) == len(api["changes"])


def test_cli_api_and_page_all_refuse_a_damaged_conversation(
    demo_file: tuple[Path, TestClient[Litestar]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, client = demo_file
    argv = ("diff", str(path), "--conversation", demo_data.INCIDENT, "--left", "openai", "--right", "anthropic")
    assert main(list(argv)) == 2
    assert "助理消息需要子类实现转换过程" in capsys.readouterr().err
    assert client.get(f"/api/conversations/{demo_data.INCIDENT}/diff?left=openai&right=anthropic").status_code == 422
    page = client.get(f"/conversations/{demo_data.INCIDENT}/diff?left=openai&right=anthropic").text
    assert "data-contract-error" in page and "data-differences" not in page


def test_the_cli_diff_the_page_offers_reads_the_server_s_attachments_and_counts_what_the_page_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "attachments"
    demo_data.write_attachments(root)
    records = demo_data.every_kind()
    path = tmp_path / "every-kind.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in records]
    with TestClient(create_app(Settings(attachments_root=root), temp_store(messages)), base_url=BASE_URL) as client:
        api = client.get(f"/api{EK}/diff?left=openai&right=anthropic").json()
    command = diff_command(demo_data.EVERY_KIND, "openai", "anthropic", None, root)
    argv = shlex.split(command.split(" | ", 1)[1])
    assert argv[-2:] == ["--attachments-root", str(root)]
    _, out = _cli(capsys, *[str(path) if a == "-" else a for a in argv[2:]], "--json")
    assert masking.mask_value(json.loads(out)) == api
    _, unread = _cli(capsys, str(path), "--conversation", demo_data.EVERY_KIND, "--left", "openai", "--right",
                     "anthropic", "--json")  # fmt: skip
    assert json.loads(unread)["causes"] != api["causes"]  # without the root, attachments degrade: other changes
