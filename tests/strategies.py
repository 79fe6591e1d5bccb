"""Hypothesis strategies for stored messages in their wire (JSON) form, FORMAT.md's every shape.

They generate plain JSON objects, not models, so the tests can check that what comes
back from the typed round trip still holds every key of what went in.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=10)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
# Keys no model declares: the parser must keep them.
UNKNOWN_KEYS = st.dictionaries(st.sampled_from(["x_extra", "future_field", "__trace_meta", "weird key"]), JSON_VALUES)

URLS = st.sampled_from(
    [
        "https://example.com/cat.png",
        "https://example.com",
        "HTTP://EXAMPLE.com/a b?q=1#frag",
        "data:image/png;base64,iVBORw0KGgo=",
        "file:///srv/x",
        "javascript:alert(1)",
        "s3://bucket/key.mp4",
    ]
)
PATHS = st.sampled_from(
    ["uploads/cat.png", "../x", "C:\\x\\y.pdf", "./a//b.wav", "/abs/path/", "~/note.txt", "a:b", "clip.mp4"]
)
LOCATIONS = URLS | PATHS


def _with_unknown(base: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda d, extra: {**extra, **d}, base, UNKNOWN_KEYS)


def _common() -> dict[str, st.SearchStrategy[Any]]:
    return {
        "msg_id": IDS,
        "conversation_id": IDS,
        "create_ts": st.integers(0, 2**41),
        "additional_kwargs": st.dictionaries(TEXT, JSON_VALUES, max_size=2),
    }


def _obj(required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]] | None = None):
    return _with_unknown(st.fixed_dictionaries(required, optional=optional or {}))


MEDIA_FIELDS = {"url": URLS, "path": PATHS, "data": st.just("aGVsbG8="), "media_type": TEXT, "detail": TEXT}
PARTS = st.one_of(
    _obj({"type": st.just("text"), "text": TEXT}),
    *[_obj({"type": st.just(kind)}, MEDIA_FIELDS) for kind in ("image", "audio", "video")],
    _obj({"type": st.just("file")}, {**MEDIA_FIELDS, "filename": TEXT}),
)
USERS = _obj({"uid": IDS}, {"name": st.none() | TEXT})
TOOL_CALLS = _obj({"id": IDS, "name": TEXT, "arguments": st.sampled_from(['{"q": 1}', "{not json", "", "[1,2]"])})
TOOL_RETURNS = _obj(
    {"call_id": IDS},
    {"name": st.none() | TEXT, "result": TEXT, "attachments": st.lists(PARTS, max_size=2), "is_error": st.booleans()},
)
CONSOLE_RESULTS = _obj(
    {"result": TEXT},
    {
        "summary_result": st.none() | TEXT,
        "attachments": st.lists(PARTS, max_size=2),
        "meta": st.dictionaries(TEXT, JSON_VALUES, max_size=2),
    },
)
REASONING = (
    st.none()
    | TEXT
    | st.lists(
        _obj({"type": st.just("thinking"), "thinking": TEXT, "signature": TEXT})
        | _obj({"type": st.just("redacted_thinking"), "data": TEXT}),
        max_size=3,
    )
)


def base_records() -> st.SearchStrategy[dict[str, Any]]:
    """System, tool, console and function records (no msg_type: the DEFAULT_TAG branch)."""
    common = _common()
    return st.one_of(
        _obj({"role": st.just("system"), "content": TEXT}, common),
        _obj({"role": st.just("tool"), "tool_reses": st.lists(TEXT | TOOL_RETURNS, max_size=3)}, common),
        _obj({"role": st.just("console"), "console_reses": st.lists(TEXT | CONSOLE_RESULTS, max_size=2)}, common),
        _obj(
            {"role": st.just("function"), "function_res": _obj({"name": TEXT, "result": TEXT})},
            common,
        ),
    )


def assistant_records() -> st.SearchStrategy[dict[str, Any]]:
    """AssistantTextMessage records: text, reasoning in both styles, tool calls, TFL scripts."""
    return _obj(
        {"role": st.just("assistant"), "msg_type": st.just("text"), "content": TEXT},
        {
            **_common(),
            "reasoning_content": REASONING,
            "tool_calls": st.none() | st.lists(TOOL_CALLS, max_size=3),
            "tfl_scripts": st.none() | st.lists(TEXT, max_size=2),
            "function_call": st.none() | _obj({"name": TEXT, "arguments": TEXT}),
        },
    )


def damaged_records(inner: st.SearchStrategy[dict[str, Any]] | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """What the pre-fix schema wrote: user/assistant records without msg_type, any content shape."""
    content = TEXT | URLS | PATHS | USERS | st.lists(PARTS, max_size=3)
    if inner is not None:
        content = content | st.lists(inner, min_size=1, max_size=3)
    return _obj({"role": st.sampled_from(["user", "assistant"]), "content": content}, _common())


def messages(max_depth: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    """Any stored message, with traces and histories nested up to ``max_depth`` levels."""
    return _messages(max_depth)


def _messages(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    leaves = st.one_of(base_records(), assistant_records(), damaged_records(), _user_records(None))
    if depth <= 0:
        return leaves
    inner = st.deferred(lambda: _messages(depth - 1))
    return st.one_of(leaves, _user_records(inner), damaged_records(inner))


def _user_records(inner: st.SearchStrategy[dict[str, Any]] | None) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = dict(_common())
    if inner is not None:
        optional["intermediate_trace"] = _obj({"records": st.lists(inner, max_size=3)})
    contents: list[tuple[str, st.SearchStrategy[Any]]] = [
        ("text", TEXT),
        ("image", LOCATIONS),
        ("audio", LOCATIONS),
        ("video", LOCATIONS),
        ("attachment", LOCATIONS),
        ("url", URLS),
        ("contact", USERS),
        ("multipart", st.lists(PARTS, max_size=3)),
    ]
    if inner is not None:
        contents.append(("history", st.lists(inner, max_size=3)))
    return st.one_of(
        *[
            _obj({"role": st.just("user"), "msg_type": st.just(kind), "content": content}, optional)
            for kind, content in contents
        ]
    )
