"""What one request's model takes of media, beyond its dialect's format: images at all, PDFs at all, and an
inline image's size. A medium the model refuses becomes text with a warning (``RequestContext.resolve``).

The model facts come from the model table; only a model the table knows (its own entry, an alias or its
family) is limited, as :func:`core.models.limits.fit_to_model` does: an unknown model's stand-in facts say
nothing about it. The size limit is the dialect's (``Dialect.inline_image_limit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import Dialect
    from core.providers.media import ResolvedMedia

PDF = "application/pdf"


@dataclass(frozen=True, slots=True)
class MediaRules:
    """The media limits of one model: ``no_images``/``no_pdf`` name the model when its table entry says it takes
    none; ``inline_image_limit`` is the most base64 characters one inline image may have (None: no limit)."""

    no_images: str | None = None
    no_pdf: str | None = None
    inline_image_limit: int | None = None

    def refusal(self, media: ResolvedMedia) -> str | None:
        """Why the model refuses ``media`` (the reason of its text fallback), or None when it takes it."""
        media_type = media.media_type or ""
        if self.no_images is not None and (media.kind == "image" or media_type.startswith("image/")):
            return f"the model table says {self.no_images!r} takes no images"
        if self.no_pdf is not None and media_type == PDF:
            return f"the model table says {self.no_pdf!r} takes no PDF input"
        limit = self.inline_image_limit
        if limit is not None and media.data is not None and media_type.startswith("image/") and len(media.data) > limit:
            return f"inline image of {len(media.data):,} base64 bytes is over the provider's {limit:,}-byte limit"
        return None


NO_RULES = MediaRules()


def media_rules(dialect: Dialect, choice: FactsChoice) -> MediaRules:
    """The media rules of the model ``choice`` found, under ``dialect``'s inline image limit."""
    facts = choice.facts
    known = facts is not None and choice.match != "dialect"
    no_images = facts.model if known and facts is not None and facts.says("vision") is False else None
    no_pdf = facts.model if known and facts is not None and facts.says("pdf_input") is False else None
    if no_images is None and no_pdf is None and dialect.inline_image_limit is None:
        return NO_RULES
    return MediaRules(no_images, no_pdf, dialect.inline_image_limit)
