#!/usr/bin/env python3
"""Refresh ``core/models/litellm.json`` from the newest LiteLLM release on PyPI.

LiteLLM (MIT) ships its model map, ``model_prices_and_context_window_backup.json``, inside its wheel: limits and
``supports_*`` flags for hundreds of models, kept up to date by its maintainers. This script downloads the wheel
(``pip download``, no install), keeps the chat models of the providers Traceloupe speaks and the fields it reads,
and writes them with the release's version, so a diff of the data file shows what changed upstream.

Usage: ``python scripts/refresh_model_table.py [--wheel PATH]`` (``--wheel`` reads a wheel already downloaded).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.models.table import DATA_FILE, KEPT_FIELDS  # noqa: E402
from core.providers import all_providers  # noqa: E402

MAP_MEMBER = "litellm/model_prices_and_context_window_backup.json"
UPSTREAM = "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json"


def download_wheel(into: Path) -> Path:
    """The newest litellm wheel, downloaded without its dependencies."""
    subprocess.run(  # noqa: S603 (a fixed argument list, no shell)
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "litellm", "-d", str(into)],
        check=True,
    )
    return next(into.glob("litellm-*.whl"))


def kept_entries(model_map: dict[str, object]) -> dict[str, dict[str, object]]:
    """The chat models of every dialect's slice (``Dialect.model_table_slice``), with the fields the table reads."""
    wanted = {host for dialect in all_providers() for host in dialect.model_table_slice}
    kept: dict[str, dict[str, object]] = {}
    for model_id, entry in sorted(model_map.items()):
        if not isinstance(entry, dict) or entry.get("mode") not in {"chat", "responses"}:
            continue
        if entry.get("litellm_provider") not in wanted:
            continue
        kept[model_id] = {key: entry[key] for key in sorted(entry) if key in KEPT_FIELDS or key.startswith("supports_")}
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a litellm wheel already downloaded")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = ns.wheel or download_wheel(Path(tmp))
        version = re.match(r"litellm-([^-]+)-", wheel.name)
        with zipfile.ZipFile(wheel) as archive:
            model_map = json.loads(archive.read(MAP_MEMBER))
    data = {
        "source": {
            "name": "LiteLLM model map",
            "package": "litellm",
            "version": version.group(1) if version else "unknown",
            "file": MAP_MEMBER,
            "upstream": UPSTREAM,
            "license": "MIT",
        },
        "models": kept_entries(model_map),
    }
    DATA_FILE.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(data['models'])} models from litellm {data['source']['version']} to {DATA_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
