"""OpenAI Chat Completions (``POST /v1/chat/completions``): docs/providers.md section 1.

Translation only; the shared Chat Completions shape is in :mod:`core.providers.dialects.chat_completions`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from core.llm.messages import LLMMediaPart
from core.providers.base import JSON, RequestContext, RequestOptions
from core.providers.dialects.chat_completions import (
    OPENAI_IMAGE_LIMIT,
    OPENAI_MAX_IMAGES,
    OPENAI_TABLE_CORRECTIONS,
    UNKNOWN_OPENAI_MODEL,
    ChatCompletionsDialect,
    openai_profile,
    openai_profiles,
    openai_table_profile,
)
from core.providers.effort import reasoning_effort

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding
    from core.providers.profiles import ModelProfile

# Image formats Chat Completions takes (PNG, JPEG, WEBP, non-animated GIF) [docs].
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
# input_audio takes base64 wav/mp3 only, no URL form [SDK: ChatCompletionContentPartInputAudioParam].
AUDIO_TYPES = frozenset({"audio/wav", "audio/mpeg"})
# File parts: PDF only, inline (file_data) or by file id; no file_url in Chat Completions [docs].
FILE_TYPES = frozenset({"application/pdf"})
# No video part at all [SDK: the user content-part union has text, image_url, input_audio, file].


class OpenAIChatDialect(ChatCompletionsDialect):
    """OpenAI Chat Completions."""

    name = "openai"
    # LangChain's AzureChatOpenAI reports "azure" in _get_ls_params.
    other_names = ("azure",)
    default_model = "gpt-4.1"
    description = "OpenAI Chat Completions"
    SYSTEM_ROLE: ClassVar[str] = "system"
    inline_image_limit = OPENAI_IMAGE_LIMIT
    max_images_per_request = OPENAI_MAX_IMAGES
    SENDS_REASONING_EFFORT: ClassVar[bool] = True
    key_var = "OPENAI_API_KEY"
    base_url_var = "OPENAI_BASE_URL"
    price_id = "openai"
    profiles = openai_profiles("openai")
    conservative = openai_profile("openai", "openai-conservative", UNKNOWN_OPENAI_MODEL)
    suggested_models = ("gpt-5.1", "gpt-5", "gpt-5-chat", "o3", "gpt-4.1")
    # platform.openai.com/docs/models: gpt-*, the o-series reasoning models, chatgpt-*, codex-*.
    model_families = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-")
    model_table_slice = ("openai",)
    model_table_corrections = OPENAI_TABLE_CORRECTIONS

    def table_profile(self, profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
        return openai_table_profile(profile, choice)

    def check_model_rules(self, body: JSON, choice: FactsChoice) -> Iterator[Finding]:
        from core.preflight import openai as rules

        return rules.check_effort(body, choice)

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        params: JSON = {"model": options.model or self.default_model}
        if options.max_tokens is not None:
            params["max_completion_tokens"] = options.max_tokens  # reasoning models reject max_tokens
        effort = reasoning_effort(options, self.profile(options), self.facts(ctx), ctx)
        if effort is not None:
            params["reasoning_effort"] = effort
        return params

    def media_part(self, part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON | str:
        kind = part.kind
        if kind == "video":
            return ctx.degrade(part, msg_id, "Chat Completions has no video part")
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return media
        if kind == "image":
            return self.image_part(part, media, msg_id, ctx, IMAGE_TYPES)
        if kind == "audio":
            return self.inline_audio_part(part, media, msg_id, ctx)
        if media.data is None or media.media_type not in FILE_TYPES:
            return ctx.file_text(part, media, msg_id) or ctx.degrade(part, msg_id, "file parts take inline PDF only")
        return {"type": "file", "file": {"file_data": media.data_url, "filename": part.filename or "document.pdf"}}


DIALECT = OpenAIChatDialect()
