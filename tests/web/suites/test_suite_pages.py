"""The suite run page's context: where each row links, how rows sort with missing values, what the poll asks for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.suites import ItemView, Progress, SuiteRunView, build_report
from web.suites.pages import SORTS, suite_run_page


def _item(position: int, outcome: str = "matched", **fields: object) -> ItemView:
    base = ItemView(
        item_pk=position + 1, conversation_id=f"c-{position}", position=position, outcome="matched", attempt=1,
        diverged_step=None, diverged_at=None, reason=None, error=None, run_id=f"{position:032x}", input_tokens=10,
        output_tokens=2, cost_usd=0.001 * position, cost_note=None, started_at=1, finished_at=2, wall_ms=100 + position,
    )  # fmt: skip
    return replace(base, outcome=outcome, **fields)  # type: ignore[arg-type]


def _run(mode: str, items: list[ItemView], status: str = "finished") -> SuiteRunView:
    return SuiteRunView(
        run_id="f" * 32, suite="s", provider="openai", model="gpt-4o", mode=mode, concurrency=2,  # type: ignore[arg-type]
        max_cost=None, baseline_run_id=None, status=status, created_at=1, finished_at=2, items=tuple(items),  # type: ignore[arg-type]
    )  # fmt: skip


def _page(run: SuiteRunView, sort: str = "position", order: str = "asc", outcome: str = "") -> object:
    counts: dict[str, int] = {}
    for i in run.items:
        counts[i.outcome] = counts.get(i.outcome, 0) + 1
    return suite_run_page(build_report(run, None), Progress(counts, 0.0), {}, sort=sort, order=order, outcome=outcome)


def test_a_final_item_links_its_rerun_and_a_steps_item_its_step_run_at_the_diverging_step() -> None:
    final = _page(_run("final", [_item(0)]))
    assert final.rows[0].run_url == f"/runs/{0:032x}"  # type: ignore[attr-defined]
    steps = _page(_run("steps", [_item(0), _item(1, "diverged", diverged_step=3), _item(2, "failed", run_id=None)]))
    urls = [r.run_url for r in steps.rows]  # type: ignore[attr-defined]
    assert urls == [f"/step-runs/{0:032x}", f"/step-runs/{1:032x}?at=3#step-3", None]


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_rows_without_a_value_sort_last_either_way(order: str) -> None:
    items = [_item(0), _item(1, "diverged", diverged_step=2), _item(2), _item(3, "diverged", diverged_step=1)]
    page = _page(_run("steps", items), sort="step", order=order)
    ids = [r.item.conversation_id for r in page.rows]  # type: ignore[attr-defined]
    assert ids == (["c-3", "c-1", "c-0", "c-2"] if order == "asc" else ["c-1", "c-3", "c-0", "c-2"])


@pytest.mark.parametrize("column", [c for c in SORTS if c not in ("step", "tokens")])  # values all distinct
def test_every_column_sorts_both_ways(column: str) -> None:
    items = [_item(2), _item(0, "failed"), _item(1, "diverged", diverged_step=1)]

    def ids(order: str) -> list[str]:
        page = _page(_run("final", items), sort=column, order=order)
        return [r.item.conversation_id for r in page.rows]  # type: ignore[attr-defined]

    assert ids("asc") == ids("desc")[::-1] and len(ids("asc")) == 3


def test_the_poll_and_the_links_keep_the_sort_and_the_filter() -> None:
    page = _page(_run("final", [_item(0), _item(1, "diverged")], status="running"), sort="cost", order="desc",
                 outcome="diverged")  # fmt: skip
    base = "/suite-runs/" + "f" * 32
    assert page.url == f"{base}?sort=cost&order=desc&outcome=diverged"  # type: ignore[attr-defined]
    assert page.sort_url("cost") == f"{base}?sort=cost&outcome=diverged"  # type: ignore[attr-defined]  # flips
    assert page.sort_url("time") == f"{base}?sort=time&outcome=diverged"  # type: ignore[attr-defined]
    assert page.outcome_url(None) == f"{base}?sort=cost&order=desc"  # type: ignore[attr-defined]
    assert [r.item.outcome for r in page.rows] == ["diverged"]  # type: ignore[attr-defined]
