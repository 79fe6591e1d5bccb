"""Gemini's rules that depend on the model: the ``thinkingConfig`` it takes and whether it takes a system instruction.

Part of the Gemini dialect (:mod:`core.providers.dialects.gemini`); the thinking shape comes from the model's
profile, whether it thinks at all and whether it takes ``systemInstruction`` from the model table.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

from core.models.reasoning import Effort, effort_levels, nearest_effort, reasons

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import JSON, RequestContext, RequestOptions
    from core.providers.profiles import ModelProfile

# LiteLLM's only gemini-2.0-flash entry (Vertex AI) has no limits.
HAND_VERIFIED_MODELS: dict[str, dict[str, object]] = {
    "gemini-2.0-flash": {
        "litellm_provider": "gemini",
        "max_input_tokens": 1_048_576,
        "max_output_tokens": 8_192,
        "supports_function_calling": True,
        "supports_vision": True,
        "supports_system_messages": True,
        "source_note": "https://ai.google.dev/gemini-api/docs/models#gemini-2.0-flash (token limits)",
    }
}

# 2.5 Pro's smallest thinkingBudget; it cannot be 0 there [docs: thinking budgets].
MIN_THINKING_BUDGET = 128
# Gemini 3's lowest level that every model of the family takes, spelled as the SDK sends it [SDK: ThinkingLevel].
LOWEST_THINKING_LEVEL = "LOW"
# --effort as a Gemini 2.5 thinkingBudget: LiteLLM's DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET (litellm/constants.py).
EFFORT_BUDGETS = {"minimal": MIN_THINKING_BUDGET, "low": 1024, "medium": 2048, "high": 4096}
# --effort as a Gemini 3 thinkingLevel [SDK: google-genai ThinkingLevel MINIMAL, LOW, MEDIUM, HIGH].
GEMINI_3_LEVELS: tuple[Effort, ...] = ("minimal", "low", "medium", "high")

# The preflight rules these fixes answer (core/preflight/gemini.py holds them with their sources).
NO_SYSTEM_RULE = "system-instruction-supported"
NO_THINKING_RULE = "thinking-supported"
THINKING_CONFIG_RULE = "thinking-config"
FILE_URI_RULE = "file-uri-fetched"
FILE_URI_MIME_RULE = "file-uri-mime-type"

# Which fileData.fileUri Gemini fetches: a Files API URI, a YouTube URL, or (Gemini 2.5 and later) an external https
# URL (ai.google.dev/gemini-api/docs/file-input-methods). Gemini 2.0 and earlier fetch no external URL: 400 "Invalid
# or unsupported file uri: https://upload.wikimedia.org/..." (BoundaryML/baml#1548, gemini-2.0-flash); Vercel's
# provider passes external URLs to every Gemini "except the Gemini 2.0 family", never an http:// one (vercel/ai#16757).
FILES_API_PREFIX = "https://generativelanguage.googleapis.com/"
YOUTUBE_PREFIXES = ("https://www.youtube.com/", "https://youtube.com/", "https://youtu.be/")
NO_EXTERNAL_URLS = re.compile(r"gemini-(?:1\.|2\.0)")


# The MIME types Gemini fetches from an external URL
# (ai.google.dev/gemini-api/docs/file-input-methods#supported-content-types): Vercel's provider passes only these as
# URLs and downloads the rest, pinned by its regression test (vercel/ai#16757, packages/google/src/google-provider.ts
# supportedExternalUrlMediaTypes; text/markdown refused).
EXTERNAL_URL_MIME_TYPES = frozenset(
    {
        *("text/html", "text/css", "text/plain", "text/xml", "text/csv", "text/rtf", "text/javascript"),
        *("application/json", "application/pdf", "image/bmp", "image/jpeg", "image/png", "image/webp"),
        *("video/mp4", "video/mpeg", "video/quicktime", "video/avi", "video/x-flv", "video/mpg", "video/webm"),
        *("video/wmv", "video/3gpp"),
    }
)


def file_uri_refusal(uri: str, model: str, mime: str | None) -> tuple[str, str] | None:
    """The rule Gemini's fetch of ``uri`` (of MIME type ``mime``) for ``model`` would break, and why (None: it
    fetches it)."""
    if uri.startswith(FILES_API_PREFIX) or uri.startswith(YOUTUBE_PREFIXES):
        return None
    if uri[:7].lower() == "http://":
        return FILE_URI_RULE, "Gemini fetches no http:// file URI, only https (vercel/ai#16757)"
    if NO_EXTERNAL_URLS.search(model.lower()):
        return FILE_URI_RULE, (
            f"{model} fetches no external file URL, only Files API URIs and YouTube (400 'Invalid or unsupported "
            "file uri', BoundaryML/baml#1548)"
        )
    if mime not in EXTERNAL_URL_MIME_TYPES:
        return FILE_URI_MIME_RULE, (
            f"Gemini fetches no {mime or 'untyped'} file from an external URL (supported content types of "
            "ai.google.dev/gemini-api/docs/file-input-methods; vercel/ai#16757)"
        )
    return None


# Gemma on the Gemini API: 400 "Developer instruction is not enabled for models/gemma-3-27b-it"
# (0xPlaygrounds/rig#788); the model map says supports_system_messages false for it.
SYSTEM_FOLDED = (
    "{model} takes no system instruction (400 'Developer instruction is not enabled'; {source}); the system "
    "prompt was put at the start of the first user turn"
)


def table_profile(profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
    """``profile`` with what the model table states about the model's thinking: a model it says does not think gets
    no thinkingConfig. The shape (thinkingBudget or thinkingLevel) and whether thinking can be switched off are in
    no dataset: the Gemini thinking docs give them per family, which the name patterns hold."""
    facts = choice.facts
    if facts is None or reasons(choice) is not False:
        return profile
    evidence = f"{facts.source}: {facts.model} has no supports_reasoning"
    return replace(profile, name="gemini-no-thinking", gemini_thinking="none", thinking_off=True, evidence=evidence)


def thinking_config(
    options: RequestOptions, profile: ModelProfile, choice: FactsChoice, ctx: RequestContext
) -> JSON | None:
    """``thinkingConfig`` in the shape the model takes: a budget (2.5), a level (3), or none at all."""
    on = options.thinking_asked
    if on is None:
        return None
    shape = profile.gemini_thinking
    if reasons(choice) is False and choice.facts is not None:
        # 400 "Thinking is not enabled for models/gemini-2.0-flash-preview-image-generation" (lobehub/lobehub#7985).
        ctx.warn(
            None,
            "thinking",
            f"{choice.facts.model} does not think ({choice.facts.source}); no thinkingConfig sent",
            NO_THINKING_RULE,
        )
        return None
    if shape == "none":
        if on:
            ctx.warn(
                None, "thinking", f"{profile.name} models do not think; no thinkingConfig sent", THINKING_CONFIG_RULE
            )
        return None
    if on:
        effort = options.effort
        if effort is None:
            return {"includeThoughts": True}
        return _effort_config(effort, shape, choice, ctx)
    if profile.thinking_off:
        return {"thinkingBudget": 0}
    if shape == "budget":
        ctx.warn(
            None,
            "thinking",
            f"{profile.name} cannot switch thinking off; the smallest budget was sent",
            THINKING_CONFIG_RULE,
        )
        return {"thinkingBudget": MIN_THINKING_BUDGET}
    if shape == "level":
        ctx.warn(
            None,
            "thinking",
            f"{profile.name} cannot switch thinking off; the lowest thinkingLevel was sent",
            THINKING_CONFIG_RULE,
        )
        return {"thinkingLevel": LOWEST_THINKING_LEVEL}
    assert_never(shape)


def _effort_config(effort: str, shape: str, choice: FactsChoice, ctx: RequestContext) -> JSON:
    """An effort as a budget (2.5) or a level (3), moved to the nearest the model takes, with a warning."""
    levels = tuple(level for level in effort_levels(choice) or GEMINI_3_LEVELS if level in GEMINI_3_LEVELS)
    sent = effort if effort in levels else nearest_effort(levels or ("low", "medium", "high"), effort)
    if sent != effort:
        ctx.warn(None, "thinking", f"Gemini takes no thinking level {effort!r} for this model; {sent!r} was sent")
    if shape == "level":
        return {"thinkingLevel": sent.upper(), "includeThoughts": True}
    return {"thinkingBudget": EFFORT_BUDGETS[sent], "includeThoughts": True}


def takes_system(choice: FactsChoice) -> bool:
    """Whether the model takes ``systemInstruction``: False only where its table entry says so."""
    facts = choice.facts
    return facts is None or choice.match == "dialect" or facts.says("system_messages") is not False


def fold_system(fragments: JSON, system: list[JSON], choice: FactsChoice, ctx: RequestContext) -> None:
    """Put the system parts at the start of the first user content, for a model that refuses a system instruction:
    the prompt still reaches the model, as text ahead of the first user turn."""
    contents: list[JSON] = fragments["contents"]
    text = "\n\n".join(str(part.get("text", "")) for part in system if part.get("text"))
    facts = choice.facts
    model = facts.model if facts else choice.model
    source = facts.source if facts else "the model table"
    ctx.warn(None, "system", SYSTEM_FOLDED.format(model=model, source=source), NO_SYSTEM_RULE)
    if not text:
        return
    if contents and contents[0].get("role") == "user":
        contents[0]["parts"] = [{"text": text}, *contents[0]["parts"]]
    else:
        contents.insert(0, {"role": "user", "parts": [{"text": text}]})
