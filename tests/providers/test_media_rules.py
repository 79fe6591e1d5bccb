"""The media rules a model's table entry sets: what it says it does not take becomes text; what a stand-in
model's facts say limits nothing."""

from __future__ import annotations

from core.models.table import FactsChoice, Match, ModelFacts
from core.providers import provider_named
from core.providers.media import ResolvedMedia
from core.providers.media_rules import NO_RULES, media_rules

PDF = ResolvedMedia("file", "application/pdf", data="JVBERi0=")
PNG = ResolvedMedia("image", "image/png", url="https://example.com/cat.png")


def _choice(match: Match, **flags: bool) -> FactsChoice:
    facts = ModelFacts("text-model", "text-model", "openai", None, None, flags, "test table")
    return FactsChoice(facts, "text-model", match)


def test_a_pdf_to_a_model_whose_entry_says_no_pdf_input_is_refused() -> None:
    rules = media_rules(provider_named("openai"), _choice("exact", pdf_input=False, vision=True))
    assert rules.refusal(PDF) == ("model-takes-pdf", "the model table says 'text-model' takes no PDF input")
    assert rules.refusal(PNG) is None


def test_an_image_to_a_model_whose_entry_says_no_vision_is_refused() -> None:
    rules = media_rules(provider_named("openai"), _choice("alias", vision=False))
    assert rules.refusal(PNG) == ("model-takes-images", "the model table says 'text-model' takes no images")
    assert rules.refusal(PDF) is None


def test_the_default_models_facts_standing_in_for_an_unknown_model_limit_nothing() -> None:
    rules = media_rules(provider_named("openai"), _choice("dialect", vision=False, pdf_input=False))
    assert (rules.no_images, rules.no_pdf) == (None, None)
    assert rules.refusal(PNG) is None
    assert rules.refusal(PDF) is None


def test_a_dialect_without_media_limits_has_no_rules_for_an_unknown_model() -> None:
    assert media_rules(provider_named("zhipu"), _choice("dialect", vision=False)) is NO_RULES
