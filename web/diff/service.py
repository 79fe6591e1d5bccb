"""Two providers' requests for one conversation, as the diff page and the API compare them."""

from __future__ import annotations

from web.heavy import export_then
from web.payloads.builder import Built, PayloadBuilder, check_provider
from web.source import Loaded, StoreSource


def build_both(
    source: StoreSource,
    payloads: PayloadBuilder,
    conversation_id: str,
    left: str,
    right: str,
    upto: str | None,
    repair: bool,
) -> tuple[Loaded, Built, Built]:
    """The conversation and both providers' requests (404 for an unknown provider, conversation or upto)."""
    check_provider(left)
    check_provider(right)
    loaded = source.load(conversation_id)
    return (
        loaded,
        payloads.build(loaded, left, upto=upto or None, repair=repair),
        payloads.build(loaded, right, upto=upto or None, repair=repair),
    )


def diff_command(conversation_id: str, left: str, right: str, upto: str | None) -> str:
    """The CLI command that diffs the same two requests without the dashboard's time budget."""
    return export_then(
        conversation_id,
        *("traceloupe", "diff", "-", "--conversation", conversation_id, "--left", left, "--right", right),
        *(("--upto", upto) if upto else ()),
    )
