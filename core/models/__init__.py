"""The model table: each model's limits and capabilities, from a maintained dataset (see :mod:`core.models.table`)."""

from core.models.table import FactsChoice, ModelFacts, ModelTable, TableSource, facts_for, model_table

__all__ = ["FactsChoice", "ModelFacts", "ModelTable", "TableSource", "facts_for", "model_table"]
