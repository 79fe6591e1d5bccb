"""Work a page leaves for after its answer: run in order, each key once while it waits or runs, failures contained."""

from __future__ import annotations

import threading

import pytest

from web.backlog import Backlog


def test_work_runs_after_submit_and_a_key_waiting_or_running_is_not_added_again() -> None:
    backlog = Backlog()
    release = threading.Event()
    ran: list[str] = []
    assert backlog.submit("a", lambda: (release.wait(10), ran.append("a")))
    assert not backlog.submit("a", lambda: ran.append("a twice"))  # running
    assert backlog.submit("b", lambda: ran.append("b"))
    assert not backlog.submit("b", lambda: ran.append("b twice"))  # waiting
    release.set()
    assert backlog.wait_idle(10)
    assert ran == ["a", "b"]
    assert backlog.submit("a", lambda: ran.append("a again"))  # done: the key may come back
    assert backlog.wait_idle(10) and ran[-1] == "a again"


def test_a_failing_piece_of_work_is_logged_and_the_next_one_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    backlog = Backlog()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("the store went away")

    backlog.submit("broken", broken)
    backlog.submit("next", lambda: ran.append("next"))
    assert backlog.wait_idle(10)
    assert ran == ["next"]
    assert "the store went away" in caplog.text


def test_waiting_for_work_that_does_not_end_gives_up_after_its_timeout() -> None:
    backlog = Backlog()
    release = threading.Event()
    backlog.submit("slow", lambda: release.wait(10))
    assert not backlog.wait_idle(0.05)
    release.set()
    assert backlog.wait_idle(10)


def test_a_full_backlog_takes_no_more_work_until_some_has_run() -> None:
    backlog = Backlog(max_waiting=2)
    started, release = threading.Event(), threading.Event()
    backlog.submit("running", lambda: (started.set(), release.wait(10)))
    assert started.wait(10)  # running, so no longer waiting
    assert backlog.submit("one", lambda: None) and backlog.submit("two", lambda: None)
    assert not backlog.submit("three", lambda: None)
    release.set()
    assert backlog.wait_idle(10)
    assert backlog.submit("three", lambda: None)
    assert backlog.wait_idle(10)


def test_closing_drops_the_waiting_work_and_takes_none_after() -> None:
    backlog = Backlog()
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []
    backlog.submit("running", lambda: (started.set(), release.wait(10), ran.append("running")))
    backlog.submit("waiting", lambda: ran.append("waiting"))
    assert started.wait(10)
    backlog.close()
    release.set()
    assert backlog.wait_idle(10)
    assert ran == ["running"]
    assert not backlog.submit("later", lambda: ran.append("later"))
