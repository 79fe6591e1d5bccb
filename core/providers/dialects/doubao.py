"""Doubao on Volcengine Ark chat completions (``/api/v3/chat/completions``): docs/providers.md section 6.

OpenAI-compatible (the Ark SDK's types are a modified copy of OpenAI's); the shared shape is in
:mod:`core.providers.dialects.chat_completions`.
"""

from __future__ import annotations

from core.llm.messages import LLMMediaPart
from core.providers.base import JSON, RequestContext
from core.providers.dialects.chat_completions import (
    ChatCompletionsDialect,
    Extensions,
    audio_format,
    data_url_part,
    openai_profile,
)
from core.providers.sampling import SamplingRanges

# Image formats commonly cited for Ark [unverified]: jpeg/png/gif/webp/bmp/tiff/heic; URL or data URL.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff", "image/heic"})
# video_url {url} takes a URL or a base64 data URL [SDK: ChatCompletionContentPartVideoParam].
# input_audio {url | data, format} [SDK]. No file/PDF part in Ark Chat [SDK]: files degrade to text.
# Reasoning: the request AssistantMessageParam has no reasoning_content [SDK]; whether Ark wants it back is
# [unverified], so it is not sent (docs/providers.md: "default: do not send it").


# Ark chat: temperature 0 to 2, top_p 0 to 1, at most 4 stop strings (volcengine/volcengine-python-sdk
# volcenginesdkarkruntime/types/chat/completion_create_params.py; the Doubao chat API reference,
# developer.open-douyin.com/docs/resource/zh-CN/ai-avatar/develop/openapi/large-model-call: stop "最多支持 4 个字符串").
ARK_SAMPLING = SamplingRanges(
    temperature_max=2.0,
    source="volcengine-python-sdk CompletionCreateParamsBase: temperature 'between 0 and 2', stop 'Up to 4 sequences'; "
    "Doubao chat API reference (developer.open-douyin.com .../openapi/large-model-call): stop at most 4 strings",
    max_stop=4,
)

# LiteLLM's map has no Doubao Seed 1.6 entry.
HAND_VERIFIED_MODELS: dict[str, dict[str, object]] = {
    "doubao-seed-1-6": {
        "litellm_provider": "volcengine",
        "max_input_tokens": 256000,
        "max_output_tokens": 16000,
        "supports_function_calling": True,
        "supports_vision": True,
        "supports_reasoning": True,
        "source_note": "https://www.volcengine.com/docs/82379/1330310 (as quoted by lobehub/lobe-chat "
        "src/config/aiModels/volcengine.ts: 256k context, 16k output)",
    }
}


class DoubaoDialect(ChatCompletionsDialect):
    """Doubao (Volcengine Ark) chat."""

    name = "doubao"
    default_model = "doubao-seed-1-6"
    description = "Doubao on Volcengine Ark chat completions"
    key_var = "DOUBAO_API_KEY"
    base_url_var = "DOUBAO_BASE_URL"
    default_base_url = "https://ark.cn-beijing.volces.com/api/v3"
    price_id = None  # genai-prices has no Volcengine table
    # Doubao switches reasoning with its own ``thinking`` parameter (EXTENSIONS.params: the base class sends it).
    profiles = ((r"doubao-", openai_profile("doubao", "doubao", "Volcengine Ark chat (docs/providers.md section 6)")),)
    conservative = openai_profile("doubao", "doubao-conservative", "OpenAI-compatible, for an unknown model")
    suggested_models = ("doubao-seed-1-6",)
    # volcengine.com/docs/82379 (Ark): doubao-* model ids, the deepseek-* and kimi-* models it hosts, and
    # inference endpoint ids (ep-...), which Ark accepts in the model field.
    model_families = ("doubao-", "deepseek-", "kimi-", "ep-")
    model_table_slice = ("volcengine",)
    model_table_extra = HAND_VERIFIED_MODELS
    sampling_ranges = ARK_SAMPLING
    # The Ark SDK's types are a modified copy of OpenAI's: OpenAI's Chat types plus these.
    EXTENSIONS = Extensions(
        params=frozenset({"thinking"}), parts={"video_url": frozenset({"url", "fps"})}, audio_url=True
    )

    def media_part(self, part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON | str:
        kind = part.kind
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return media
        if kind == "file":
            return ctx.file_text(part, media, msg_id) or ctx.degrade(part, msg_id, "Ark chat has no file part")
        if kind == "image":
            return self.image_part(part, media, msg_id, ctx, IMAGE_TYPES)
        if kind == "video":
            return data_url_part("video_url", media.data_url)
        fmt = audio_format(media.media_type)
        if fmt is None:
            return ctx.degrade(part, msg_id, "input_audio takes wav or mp3")
        source = {"data": media.data} if media.data is not None else {"url": media.url}
        return {"type": "input_audio", "input_audio": {**source, "format": fmt}}


DIALECT = DoubaoDialect()
