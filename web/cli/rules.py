"""``traceloupe rules``: each provider's rule catalogue (id, severity, source), so a preflight finding or a
fix ``payload --report`` names can be looked up with its evidence."""

from __future__ import annotations

import argparse
import sys

from web.cli.terminal import cell


def register(parser: argparse.ArgumentParser) -> None:
    """``--provider``, ``--json``."""
    from core.providers import dialect_names

    parser.add_argument("--provider", choices=dialect_names(), default=None, help="only this provider's rules")
    parser.add_argument("--json", action="store_true", help="print a JSON object (for scripts)")


def run(ns: argparse.Namespace) -> int:
    """Print the catalogue, provider by provider."""
    from core.jsonio import dumps
    from core.preflight.catalogue import catalogue
    from core.providers import all_providers, provider_named

    chosen = [provider_named(ns.provider)] if ns.provider else list(all_providers())
    if ns.json:
        listed = {
            d.name: [
                {"id": r.id, "severity": r.severity, "rule": r.summary, "source": r.authority} for r in catalogue(d)
            ]
            for d in chosen
        }
        sys.stdout.buffer.write(dumps({"providers": listed}, indent=True) + b"\n")
        return 0
    print(f"{'provider':<17} {'id':<34} {'severity':<8} rule (source)")
    for dialect in chosen:
        for rule in catalogue(dialect):
            print(f"{cell(dialect.name, 17)} {cell(rule.id, 34)} {rule.severity:<8} {rule.summary} ({rule.authority})")
    return 0
