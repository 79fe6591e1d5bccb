"""Each model's limits and capabilities, read from LiteLLM's maintained model map (packaged, MIT).

The data file ``litellm.json`` is written by ``scripts/refresh_model_table.py`` and records the LiteLLM
release it came from. A dialect names its slice of the map (``Dialect.model_table_slice``: LiteLLM's provider
ids, its own first) and may add hand-verified entries for models no dataset lists
(``Dialect.model_table_extra``, each with its ``source``) and correct a listed model's flags where the provider's own
answers contradict them (``Dialect.model_table_corrections``, each with its source). A model is found by its exact
id, else as an alias (the same model with a date, ``-preview`` or ``-latest`` suffix), else by its family (the
longest known id it extends), else the dialect's default model stands in, with a warning.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from core.providers.base import Dialect

DATA_FILE = Path(__file__).with_name("litellm.json")
"""The packaged slice of LiteLLM's model map."""

KEPT_FIELDS = frozenset({"litellm_provider", "max_input_tokens", "max_output_tokens", "mode", "deprecation_date"})
"""The fields of a model-map entry the table reads, besides the ``supports_*`` flags."""

Match = Literal["exact", "alias", "family", "dialect"]
"""How a model was found: its own id, the same model under a dated/preview id, the family it extends, or the
dialect's default model standing in for an unknown one."""

# What follows a model's id when the same model is published under a longer one.
_ALIAS_SUFFIX = re.compile(r"-(preview|latest|exp|\d{4}-\d{2}-\d{2}|\d{6,8})(-.*)?|@\d{8}")


@dataclass(frozen=True, slots=True)
class TableSource:
    """Where the packaged data came from."""

    name: str
    version: str
    upstream: str
    license: str


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What the table says about one model. ``None`` where the source says nothing."""

    model: str
    table_id: str
    host: str
    max_input_tokens: int | None
    max_output_tokens: int | None
    flags: Mapping[str, bool]
    source: str
    deprecation_date: str | None = None

    def says(self, flag: str) -> bool | None:
        """The source's answer for ``supports_<flag>`` (``"vision"``, ``"assistant_prefill"``…), None if silent."""
        return self.flags.get(flag)

    def to_json(self) -> dict[str, Any]:
        """This model's facts as a JSON object (``traceloupe models --json``)."""
        return {
            "model": self.model,
            "table_id": self.table_id,
            "host": self.host,
            "max_input_tokens": self.max_input_tokens,
            "max_output_tokens": self.max_output_tokens,
            "supports": dict(sorted(self.flags.items())),
            "deprecation_date": self.deprecation_date,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class FactsChoice:
    """The facts found for a model, how they were found, and the warning when they are not the model's own."""

    facts: ModelFacts | None
    model: str
    match: Match
    warning: str | None = None


def _facts(table_id: str, entry: Mapping[str, Any], source: str) -> ModelFacts:
    flags = {key.removeprefix("supports_"): value for key, value in entry.items() if key.startswith("supports_")}
    return ModelFacts(
        model=_bare(table_id),
        table_id=table_id,
        host=str(entry.get("litellm_provider", "")),
        max_input_tokens=_count(entry.get("max_input_tokens")),
        max_output_tokens=_count(entry.get("max_output_tokens")),
        flags={key: value for key, value in flags.items() if isinstance(value, bool)},
        source=str(entry.get("source_note") or entry.get("source") or source),
        deprecation_date=entry.get("deprecation_date"),
    )


def _corrected(facts: ModelFacts, correction: Mapping[str, Any]) -> ModelFacts:
    """``facts`` with the flags a hand-verified correction gives in place of the dataset's, its source added."""
    flags = {key.removeprefix("supports_"): value for key, value in correction.items() if key.startswith("supports_")}
    source = f"{facts.source}, corrected by {correction['source_note']}"
    return replace(facts, flags={**facts.flags, **flags}, source=source)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _bare(model_id: str) -> str:
    """A model id without its routing prefix (``gemini/``, ``vertex_ai/``, ``models/``…), lower-cased."""
    return model_id.rsplit("/", 1)[-1].lower()


class ModelTable:
    """The packaged model map, indexed per dialect slice on first use."""

    def __init__(self, source: TableSource, entries: Mapping[str, Mapping[str, Any]]) -> None:
        self.source = source
        self._entries = entries
        self._label = f"{source.name} {source.version}"
        self._indexes: dict[str, dict[str, ModelFacts]] = {}

    @classmethod
    def load(cls, path: Path = DATA_FILE) -> ModelTable:
        """The table in ``path`` (the packaged file by default)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = data["source"]
        source = TableSource(meta["name"], meta["version"], meta["upstream"], meta["license"])
        return cls(source, data["models"])

    def models_of(self, dialect: Dialect) -> dict[str, ModelFacts]:
        """Every model of ``dialect`` by its bare id: its hand-verified entries first, then its slice in order."""
        index = self._indexes.get(dialect.name)
        if index is None:
            found: dict[str, ModelFacts] = {}
            for facts in self._slice(dialect):
                found.setdefault(facts.model, facts)
            for model, correction in dialect.model_table_corrections.items():
                if model in found:
                    found[model] = _corrected(found[model], correction)
            index = self._indexes[dialect.name] = dict(sorted(found.items()))
        return index

    def _slice(self, dialect: Dialect) -> Iterator[ModelFacts]:
        for table_id, entry in dialect.model_table_extra.items():
            yield _facts(table_id, entry, "hand-verified")
        for host in dialect.model_table_slice:
            for table_id, entry in self._entries.items():
                if entry.get("litellm_provider") == host:
                    yield _facts(table_id, entry, self._label)

    def lookup(self, dialect: Dialect, model: str | None) -> FactsChoice:
        """The facts of ``model`` (None: the dialect's default model) as :data:`Match` describes."""
        model = model or dialect.default_model
        known = self.models_of(dialect)
        name = _bare(model)
        if name in known:
            return FactsChoice(known[name], model, "exact")
        aliases = sorted(m for m in known if m.startswith(name) and _ALIAS_SUFFIX.fullmatch(m[len(name) :]))
        if aliases:
            return FactsChoice(known[aliases[0]], model, "alias")
        family = name
        while "-" in family:
            family = family.rsplit("-", 1)[0]
            if family in known:
                if _ALIAS_SUFFIX.fullmatch(name[len(family) :]):  # claude-3-5-haiku-20241022: the same model, dated
                    return FactsChoice(known[family], model, "alias")
                warning = f"model {model!r} is not in the model table; the facts of {family!r} were used"
                return FactsChoice(known[family], model, "family", warning)
        default = known.get(_bare(dialect.default_model))
        warning = (
            f"model {model!r} is not in the model table ({self._label}); the facts of {dialect.name}'s default "
            f"model {dialect.default_model!r} were used"
        )
        return FactsChoice(default, model, "dialect", warning)


@functools.cache
def model_table() -> ModelTable:
    """The packaged table, read once."""
    return ModelTable.load()


def facts_for(dialect: Dialect, model: str | None) -> FactsChoice:
    """The packaged table's facts for ``model`` of ``dialect``."""
    return model_table().lookup(dialect, model)
