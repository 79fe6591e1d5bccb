"""What the AI SDK's UI and model messages share: media parts, and a tool part's output as result text.

A UI tool part carries its outcome in ``state`` (``output-available`` with ``output``, ``output-error`` with
``errorText``, ``output-denied`` with the approval's ``reason``); a model ``tool-result`` part in ``output``,
typed ``text``, ``json``, ``error-text``, ``error-json``, ``content`` or ``execution-denied`` (older SDKs:
``result`` and ``isError``).
"""

from __future__ import annotations

from typing import Any

from core.formats.span_fields import content_text
from core.llm.messages import LLMUserPart
from core.providers.reading import kind_of, media_part

_ERROR_OUTPUTS = ("error-text", "error-json", "execution-denied")
DENIED = "execution denied"


def media(part: dict[str, Any]) -> LLMUserPart | None:
    """A UI ``file`` part (``url``), or a model ``image`` (``image``) or ``file`` (``data``) part: a URL (data URLs
    included) or inline base64; None for anything else."""
    kind = part.get("type")
    where = part.get("url") if kind == "file" and "url" in part else part.get("image" if kind == "image" else "data")
    if kind not in ("file", "image") or not isinstance(where, str) or not where:
        return None
    mime = part.get("mediaType") or part.get("mimeType")
    modality = "image" if kind == "image" else kind_of(mime if isinstance(mime, str) else None)
    filename = part.get("filename") if isinstance(part.get("filename"), str) else None
    if where.startswith(("http://", "https://", "data:")):
        return media_part(modality, url=where, media_type=mime, filename=filename)
    return media_part(modality, data=where, media_type=mime, filename=filename)


def _denied(reason: Any) -> str:
    return f"{DENIED}: {reason}" if isinstance(reason, str) and reason else DENIED


def tool_output(part: dict[str, Any]) -> tuple[str, bool] | None:
    """A tool part's result as (text, is_error), or None when it has none yet (its input still streaming, or
    waiting on an approval)."""
    state = part.get("state")
    if state == "output-available":
        return content_text(part.get("output")), False
    if state == "output-error":
        return content_text(part.get("errorText")), True
    if state == "output-denied":
        approval = part.get("approval")
        return _denied(approval.get("reason") if isinstance(approval, dict) else None), True
    if part.get("type") != "tool-result":
        return None
    output = part.get("output")
    if isinstance(output, dict) and "type" in output:
        kind = output["type"]
        if kind == "execution-denied":
            return _denied(output.get("reason")), True
        return content_text(output.get("value")), kind in _ERROR_OUTPUTS
    return content_text(part.get("result", output)), bool(part.get("isError"))
