"""``traceloupe repair FILE -o OUT``: write the messages as JSONL with every damaged record re-typed.

Records that are not damaged are written byte-for-byte as they were read (key order
and unknown keys included); a damaged record gets only its ``msg_type`` back.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help=".json or .jsonl file of stored messages (- for stdin)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the JSONL (- for stdout)")


def run(ns: argparse.Namespace) -> int:
    import orjson

    from core.errors import InputError
    from core.integrity import find_damage, repair_json
    from core.reader import read_path
    from web.cli.terminal import echo
    from web.cli.where import record_root, where

    lines: list[bytes] = []
    notes: list[str] = []
    try:
        for record in read_path(ns.file):
            damage = find_damage(record.message)
            raw = repair_json(record.raw, damage) if damage else record.raw
            lines.append(orjson.dumps(raw))
            root = record_root(record)
            for item in damage:
                path = root + item.path[1:]
                lost = [name for name in item.lost if name != "msg_type"]
                still = f"; still missing: {', '.join(lost)}" if lost else ""
                notes.append(
                    f"{where(record)}: {path} msg_id={item.msg_id}: {item.role} -> {item.inferred} "
                    f"({item.confidence}: {item.reason}){still}"
                )
    except InputError as exc:
        echo(f"error: {exc}", file=sys.stderr)
        return 2
    _write(ns.output, b"".join(line + b"\n" for line in lines))
    for note in notes:
        echo(note, file=sys.stderr)
    echo(f"wrote {len(lines)} message(s) to {ns.output}; repaired {len(notes)} record(s)", file=sys.stderr)
    return 0


def _write(output: str, data: bytes) -> None:
    """Write atomically (temp file + rename), so OUT may be the input file itself."""
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    target = Path(output)
    fd, tmp = tempfile.mkstemp(dir=target.parent or Path(), prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
