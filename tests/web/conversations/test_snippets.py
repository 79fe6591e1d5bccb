"""Search snippets: the text around the first match, on both backends, wherever the match lies in a long text."""

from __future__ import annotations

import pytest

from core.store import Store
from core.store.pg_search import STRIDE
from tests.store.conftest import db_url, pg_session_url, store  # noqa: F401  (each backend's store)
from tests.store.store_factory import import_texts
from web.conversations.snippets import CONTEXT_CHARS, snippets


@pytest.mark.parametrize("at", [10, STRIDE - 3, 5 * STRIDE + 100])
def test_the_snippet_shows_the_text_around_the_first_match(store: Store, at: int) -> None:  # noqa: F811
    filler = "".join(f"word{n} " for n in range(6 * STRIDE // 7))
    text = filler[:at] + "The ΚΑΦΕ Needle" + filler[at:] + " the κάφε needle again"
    import_texts(store, {"long": text, "short": "a καφε needle here"})
    found = snippets(store, ["long", "short", "absent"], "καφε NEEDLE")
    assert set(found) == {"long", "short"}
    snippet = found["long"]
    assert snippet.match == "ΚΑΦΕ Needle"  # the first match, in the text's own case
    assert snippet.before == text[max(0, at + 4 - CONTEXT_CHARS) : at + 4]
    assert snippet.after == text[at + 15 : at + 15 + CONTEXT_CHARS]
    assert (found["short"].before, found["short"].match) == ("a ", "καφε needle")
