"""``traceloupe models``: what the model table says about each provider's models, so a body's limits can be
traced to their source."""

from __future__ import annotations

import argparse
import sys

from web.cli.terminal import cell


def register(parser: argparse.ArgumentParser) -> None:
    """``--provider``, ``--json``."""
    from core.providers import dialect_names

    parser.add_argument("--provider", choices=dialect_names(), default=None, help="only this provider's models")
    parser.add_argument("--json", action="store_true", help="print a JSON object (for scripts)")


# The flags worth a column: what changes the body Traceloupe builds.
COLUMNS = (
    ("function_calling", "tools"),
    ("vision", "vision"),
    ("pdf_input", "pdf"),
    ("reasoning", "reasoning"),
    ("assistant_prefill", "prefill"),
    ("system_messages", "system"),
)


def run(ns: argparse.Namespace) -> int:
    """Print the table's models, provider by provider."""
    from core.jsonio import dumps
    from core.models import model_table
    from core.providers import all_providers, provider_named

    table = model_table()
    chosen = [provider_named(ns.provider)] if ns.provider else list(all_providers())
    if ns.json:
        listed = {
            "source": {"name": table.source.name, "version": table.source.version, "upstream": table.source.upstream},
            "providers": {d.name: [facts.to_json() for facts in table.models_of(d).values()] for d in chosen},
        }
        sys.stdout.buffer.write(dumps(listed, indent=True) + b"\n")
        return 0
    print(f"model table: {table.source.name} {table.source.version} ({table.source.upstream})")
    header = " ".join(f"{label:<9}" for _, label in COLUMNS)
    print(f"{'provider':<17} {'model':<40} {'context':>9} {'output':>8}  {header} source")
    for dialect in chosen:
        for facts in table.models_of(dialect).values():
            flags = " ".join(f"{_flag(facts.says(flag)):<9}" for flag, _ in COLUMNS)
            print(
                f"{cell(dialect.name, 17)} {cell(facts.model, 40)} {_tokens(facts.max_input_tokens):>9} "
                f"{_tokens(facts.max_output_tokens):>8}  {flags} {cell(facts.source, 60)}".rstrip()
            )
    return 0


def _flag(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _tokens(count: int | None) -> str:
    return "?" if count is None else f"{count:,}"
