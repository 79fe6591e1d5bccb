"""Attachments: Paths are read only from under the configured root; everything else degrades, never raises.

Also the meta-test the style guide asks for: every dialect handles every part kind from every source.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from core import AudioPart, FilePart, ImageMessage, ImagePart, Message, MultiPartMessage, VideoPart
from core.providers import ChatLLM, RequestOptions, RequestResult, dialect_names, get_dialect, provider_named
from core.providers.media import MediaReader, normalise_media_type, sniff
from tests.providers.builders import ASSETS

SECRET = b"TOP-SECRET-SENTINEL-0123456789"
SECRET_B64 = base64.b64encode(SECRET).decode()


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """root/ holds a good image and hostile entries; outside/ holds the sentinel they point at."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.png").write_bytes(SECRET)
    (root / "ok.png").write_bytes((ASSETS / "cat.png").read_bytes())
    (root / "link.png").symlink_to(outside / "secret.png")
    (root / "dirlink").symlink_to(outside, target_is_directory=True)
    (root / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 5000)
    os.mkfifo(root / "fifo.png")
    return root


HOSTILE = [
    "link.png",  # symlink to a file outside
    "dirlink/secret.png",  # through a symlinked directory
    "../outside/secret.png",  # dot-dot
    "sub/../../outside/secret.png",
    "{outside}/secret.png",  # absolute, outside
    "missing.png",
    "fifo.png",  # would block a naive read
    "big.png",  # over the size cap
    "ok.png\x00.txt",
    "C:\\outside\\secret.png",
    "",
]


def request(dialect: str, root: Path | None, *paths: str) -> RequestResult:
    parts = [ImagePart(path=p) for p in paths]
    msg = MultiPartMessage(content=parts, msg_id="u1", create_ts=1)
    options = RequestOptions(attachments_root=root, max_attachment_bytes=4096)
    return ChatLLM(provider_named(dialect), options).construct_request_params([msg])


@pytest.mark.parametrize("dialect", dialect_names())
def test_no_read_outside_the_root_and_no_exception(layout: Path, dialect: str) -> None:
    paths = [p.format(outside=layout.parent / "outside") for p in HOSTILE]
    result = request(dialect, layout, *paths)
    text = json.dumps(result.body)
    assert SECRET_B64 not in text and SECRET.decode() not in text
    assert len([w for w in result.warnings if w.element == "image"]) == len(paths)
    assert {w.msg_id for w in result.warnings} == {"u1"}


def test_reasons_say_what_was_wrong(layout: Path) -> None:
    reader = MediaReader(layout, 4096)
    outside = layout.parent / "outside"
    assert "outside the attachments root" in str(reader.read("link.png")[1])
    assert "outside the attachments root" in str(reader.read("../outside/secret.png")[1])
    assert "outside the attachments root" in str(reader.read(f"{outside}/secret.png")[1])
    assert "not found" in str(reader.read("missing.png")[1])
    assert "not a regular file" in str(reader.read("fifo.png")[1])
    assert "larger than" in str(reader.read("big.png")[1])
    assert reader.read("ok.png")[0] == (ASSETS / "cat.png").read_bytes()


def test_without_a_root_no_path_is_ever_read(layout: Path) -> None:
    result = request("anthropic", None, "ok.png")
    assert result.body["messages"][0]["content"] == [{"type": "text", "text": "[image not included: ok.png]"}]
    assert "no attachments root" in result.warnings[0].reason


def test_a_path_inside_the_root_is_read_once_per_request(layout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        opened.append(os.fspath(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", counting_open)
    result = request("gemini", layout, "ok.png", "ok.png")
    assert len(opened) == 1 and opened[0].startswith(str(layout.resolve()))
    assert [p["inlineData"]["mimeType"] for p in result.body["contents"][0]["parts"]] == ["image/png", "image/png"]


def test_hostile_urls_are_never_sent() -> None:
    msg = MultiPartMessage(
        content=[
            ImagePart(url="file:///etc/passwd"),
            ImagePart(url="javascript:alert(1)"),
            ImagePart(url="data:text/html,<script>x</script>"),
            ImagePart(data="not base64!!", media_type="image/png"),
        ],
        msg_id="u1",
    )
    for dialect in dialect_names():
        result = ChatLLM(provider_named(dialect)).construct_request_params([msg])
        text = json.dumps(result.body)
        assert 'file:///etc/passwd"' not in text.replace("not included: file:///etc/passwd", "")
        assert "<script>" not in text and "not base64!!" not in text
        assert len(result.warnings) == 4, dialect


def test_media_type_helpers() -> None:
    assert normalise_media_type("image/JPG; q=1") == "image/jpeg"
    assert normalise_media_type(None) is None
    assert sniff((ASSETS / "cat.png").read_bytes()) == "image/png"
    assert sniff((ASSETS / "voice.wav").read_bytes()) == "audio/wav"
    assert sniff((ASSETS / "clip.mp4").read_bytes()) == "video/mp4"
    assert sniff((ASSETS / "logo.svg").read_bytes()) == "image/svg+xml"
    assert sniff(b"hello") is None


KINDS = {"image": ImagePart, "audio": AudioPart, "video": VideoPart, "file": FilePart}
FILES = {"image": "cat.png", "audio": "voice.wav", "video": "clip.mp4", "file": "doc.pdf"}
MEDIA_TYPES = {"image": "image/png", "audio": "audio/wav", "video": "video/mp4", "file": "application/pdf"}


def sources(kind: str) -> dict[str, dict[str, str]]:
    name = FILES[kind]
    data = base64.b64encode((ASSETS / name).read_bytes()).decode()
    return {
        "url": {"url": f"https://example.com/{name}"},
        "path": {"path": name},
        "data": {"data": data, "media_type": MEDIA_TYPES[kind]},
        "data_url": {"url": f"data:{MEDIA_TYPES[kind]};base64,{data}"},
    }


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_dialect_handles_every_part_kind_from_every_source(dialect: str, kind: str) -> None:
    """Each medium is either sent natively or degraded to text with a warning: never lost, never an error."""
    from core.preflight.sdk_types import validate_body

    for source, fields in sources(kind).items():
        part = KINDS[kind](detail=f"the {kind}", **fields)
        msgs: list[Message] = [MultiPartMessage(content=[part], msg_id="u1", create_ts=1)]
        result = ChatLLM(provider_named(dialect), RequestOptions(attachments_root=ASSETS)).construct_request_params(
            msgs
        )
        validate_body(get_dialect(dialect), result.body)
        degraded = f"[{kind}: the {kind}]" in json.dumps(result.body)
        warned = any(w.msg_id == "u1" and w.element == kind for w in result.warnings)
        assert degraded == warned, (source, result.body, result.warnings)


def test_image_message_path_and_url_both_map() -> None:
    msgs: list[Message] = [
        ImageMessage(content="cat.png", msg_id="u1", create_ts=1),
        ImageMessage(content="https://example.com/x.webp", msg_id="u2", create_ts=2),
    ]
    llm = ChatLLM(provider_named("openai-responses"), RequestOptions(attachments_root=ASSETS))
    body = llm.construct_request_params(msgs).body
    assert body["input"][0]["content"][0]["image_url"].startswith("data:image/png;base64,")
    assert body["input"][1]["content"][0]["image_url"] == "https://example.com/x.webp"
