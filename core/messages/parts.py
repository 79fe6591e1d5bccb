"""The MsgPart family: the pieces of a multipart user message or of an attachment list.

Each part carries its tag as a one-value ``type`` literal; ``MsgPart`` is the one
discriminated alias every container uses. A media part points at its bytes by
``url``, by ``path`` or inline as base64 ``data`` with a ``media_type``, and may
carry ``detail``: the text a provider gets when it cannot take the media.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Tag

# Unknown keys are kept (extra="allow") so a part written by a newer agent comes back unchanged.
_OPEN = ConfigDict(extra="allow", populate_by_name=True)


class TextPart(BaseModel):
    """A run of text."""

    model_config = _OPEN
    type: Literal["text"] = "text"
    text: str = ""


class _MediaPart(BaseModel):
    """Fields every media part shares: where its bytes are, and a description for text-only providers."""

    model_config = _OPEN
    url: str | None = None
    path: str | None = None
    data: str | None = None
    media_type: str | None = None
    detail: str | None = None

    @property
    def location(self) -> str | None:
        """The URL or path this part points at, or None when the bytes are inline."""
        return self.url if self.url is not None else self.path


class ImagePart(_MediaPart):
    """An image by URL, path or inline base64."""

    type: Literal["image"] = "image"


class AudioPart(_MediaPart):
    """An audio clip by URL, path or inline base64."""

    type: Literal["audio"] = "audio"


class VideoPart(_MediaPart):
    """A video by URL, path or inline base64."""

    type: Literal["video"] = "video"


class FilePart(_MediaPart):
    """Any other file (a PDF, a spreadsheet) by URL, path or inline base64."""

    type: Literal["file"] = "file"
    filename: str | None = None


MsgPart = Annotated[
    Annotated[TextPart, Tag("text")]
    | Annotated[ImagePart, Tag("image")]
    | Annotated[AudioPart, Tag("audio")]
    | Annotated[VideoPart, Tag("video")]
    | Annotated[FilePart, Tag("file")],
    # A key, not a function: pydantic-core reads ``type`` from dicts and instances natively, where a
    # Python function would cost a call and a JSON-to-Python conversion of every part.
    Discriminator("type"),
]
"""Any message part, dispatched on its ``type``."""
