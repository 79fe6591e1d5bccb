"""``similar``'s default threshold, measured: the similarity of answer pairs that mean the same and that do not.

``bench/answer_pairs.jsonl`` holds pairs of final answers labelled by what they mean: ``same`` (what a
replay says again in other words), ``different`` (another answer), and ``changed_fact`` (the same words
with one fact changed: a number, a date, a "not"). The default is the smallest threshold, in steps of
0.05, above every ``different`` pair, so no such pair is matched; the ``same`` pairs below it are the
price (diverged though they mean the same). ``changed_fact`` pairs are reported apart: text similarity
cannot see them, ``judge`` (or ``exact``) can.

    python bench/bench_answers.py [--pairs FILE]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from core.replay.answers import DEFAULT_THRESHOLD, similarity

PAIRS = Path(__file__).with_name("answer_pairs.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    ns = parser.parse_args()
    scored: dict[str, list[tuple[float, str, str]]] = {}
    for line in ns.pairs.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        score = similarity(pair["recorded"], pair["replayed"])
        scored.setdefault(pair["meaning"], []).append((score, pair["recorded"], pair["replayed"]))
    for meaning, rows in scored.items():
        values = sorted(s for s, _, _ in rows)
        print(f"{meaning:<13} {len(rows):>3} pairs  min {values[0]:.3f}  median {values[len(values) // 2]:.3f}  "
              f"max {values[-1]:.3f}")  # fmt: skip
    worst = max(s for s, _, _ in scored.get("different", [(0.0, "", "")]))
    chosen = round(math.floor(worst / 0.05 + 1) * 0.05, 2)
    same = scored.get("same", [])
    missed = [r for r in same if r[0] < chosen]
    print(f"highest different-meaning pair: {worst:.3f}; the threshold above it: {chosen:.2f}")
    print(f"shipped default: {DEFAULT_THRESHOLD}")
    print(f"same-meaning pairs below {chosen:.2f}: {len(missed)} of {len(same)}")
    for score, a, b in sorted(missed):
        print(f"  {score:.3f}  {a!r} / {b!r}")
    for score, a, b in scored.get("changed_fact", []):
        state = "matched" if score >= DEFAULT_THRESHOLD else "diverged"
        print(f"changed_fact {score:.3f} {state} at {DEFAULT_THRESHOLD}: {a!r} / {b!r}")


if __name__ == "__main__":
    main()
