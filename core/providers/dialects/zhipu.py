"""Zhipu AI GLM v4 chat completions (``/api/paas/v4/chat/completions``): docs/providers.md section 5.

OpenAI-compatible with GLM's own rules; the shared shape is in :mod:`core.providers.dialects.chat_completions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from core.llm.messages import LLMMediaPart
from core.providers.base import JSON, RequestContext
from core.providers.dialects.chat_completions import ChatCompletionsDialect, Extensions, data_url_part, openai_profile
from core.providers.sampling import SamplingRanges

# GLM-4V image formats: jpg/png/jpeg [docs, old]; URL or base64 data URL.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg"})
# input_audio {data, format: wav|mp3} for audio models [zai-org/z-ai-sdk-java model classes].
AUDIO_TYPES = frozenset({"audio/wav", "audio/mpeg"})
# video_url and file_url take URLs (GLM-4.5V/4.6V); inline video or files are not documented [docs, unverified].
URL_ONLY_KINDS = {"video": "video_url", "file": "file_url"}
# GLM chat (docs.z.ai/api-reference/llm/chat-completion): temperature [0.0, 1.0], top_p [0.01, 1.0], and stop
# "Currently, only one stop word is supported".
GLM_SAMPLING = SamplingRanges(
    temperature_max=1.0,
    source="Z.ai chat completion API reference (docs.z.ai/api-reference/llm/chat-completion): temperature [0.0, 1.0], "
    "top_p [0.01, 1.0], 'only one stop word is supported'",
    top_p_min=0.01,
    max_stop=1,
)


# LiteLLM lists GLM-4.6V only as hosted by Novita (novita/zai-org/glm-4.6v): the same model's limits.
HAND_VERIFIED_MODELS: dict[str, dict[str, object]] = {
    "glm-4.6v": {
        "litellm_provider": "zai",
        "max_input_tokens": 131072,
        "max_output_tokens": 32768,
        "supports_function_calling": True,
        "supports_tool_choice": True,
        "supports_vision": True,
        "supports_reasoning": True,
        "supports_system_messages": True,
        "source_note": "LiteLLM model map, novita/zai-org/glm-4.6v (the same model on another host)",
    }
}


class ZhipuDialect(ChatCompletionsDialect):
    """Zhipu GLM chat: reasoning_content goes back, tool and assistant content are strings."""

    name = "zhipu"
    default_model = "glm-4.6v"
    description = "Zhipu AI GLM v4 chat completions"
    key_var = "ZHIPU_API_KEY"
    base_url_var = "ZHIPU_BASE_URL"
    default_base_url = "https://open.bigmodel.cn/api/paas/v4/"
    price_id = "zhipuai"
    # GLM switches reasoning with its own ``thinking`` parameter (EXTENSIONS.params: the base class sends it).
    profiles = ((r"glm-", openai_profile("zhipu", "glm", "Zhipu GLM v4 chat (docs/providers.md section 5)")),)
    conservative = openai_profile("zhipu", "glm-conservative", "OpenAI-compatible, for an unknown model")
    suggested_models = ("glm-4.6v",)
    # docs.bigmodel.cn model list: glm-* chat models (plus the charglm/codegeex/cogview families).
    model_families = ("glm-", "charglm-", "codegeex-", "cogview-")
    model_table_slice = ("zai",)
    model_table_extra = HAND_VERIFIED_MODELS
    # LiteLLM lists GLM-4.5 without supports_reasoning, yet it has a thinking mode (docs.z.ai guides, thinking mode).
    reasoning_flag_complete = False
    # No typed request params (the zhipuai SDK's messages are untyped): OpenAI's Chat types plus these.
    EXTENSIONS = Extensions(
        params=frozenset({"thinking"}),
        thinking_keys=frozenset({"clear_thinking"}),
        parts={"video_url": frozenset({"url"}), "file_url": frozenset({"url"})},
        reasoning_content_back=True,
        string_tool_content=True,
    )
    # GLM-4.5+ interleaved thinking: "reasoning content must be explicitly kept and returned" [docs].
    TAKES_REASONING_CONTENT: ClassVar[bool] = True
    REASONING_ON_EVERY_TOOL_TURN: ClassVar[bool] = True
    # GLM's chat template drops list-form content on tool/assistant messages (BerriAI/litellm#25868): strings.
    EMPTY_TOOL_TURN_CONTENT: ClassVar[str | None] = ""
    sampling_ranges = GLM_SAMPLING
    # GLM v4 chat takes tool_choice "auto" only [docs: chat completions].
    TOOL_CHOICES: ClassVar[frozenset[str]] = frozenset({"auto"})
    # Z.ai, the international endpoint of the same GLM API (pydantic-ai ZaiProvider: https://api.z.ai/api/paas/v4).
    LOG_HOSTS: ClassVar[frozenset[str | None]] = frozenset({"api.z.ai"})
    # Preserved thinking: we return the complete reasoning_content sequence. The switch is a field of ``thinking``
    # (zai-rs ThinkingType {mode, clear_thinking}; docs.z.ai thinking-mode "Preserved thinking"); at the top level
    # GLM ignores it and clears the reasoning anyway.
    THINKING_ON: ClassVar[Mapping[str, object]] = {"clear_thinking": False}

    def media_part(self, part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON | str:
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return media
        kind = part.kind
        if kind == "image":
            return self.image_part(part, media, msg_id, ctx, IMAGE_TYPES)
        if kind == "audio":
            return self.inline_audio_part(part, media, msg_id, ctx)
        key = URL_ONLY_KINDS[kind]
        if media.url is None:
            text = ctx.file_text(part, media, msg_id) if kind == "file" else None
            return text or ctx.degrade(part, msg_id, f"{key} takes an http(s) URL only")
        return data_url_part(key, media.url)


DIALECT = ZhipuDialect()
