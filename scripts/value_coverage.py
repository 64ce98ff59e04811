#!/usr/bin/env python3
"""Splits `seed eval game24 --value-out` agreement by what training could show.

"Covered" states are the ones within one step of a training puzzle: every
multiset of four numbers in [1, 13] that is not a test puzzle (24.csv rows
900-999), and every state one step from it. With --corpus, also reports how
many of those states the corpus's Game-of-24 value examples hold.

  build/launch/seed eval game24 --model models/zoo/tiny-target --value-out values.jsonl
  python3 scripts/value_coverage.py values.jsonl [--corpus build/zoo/corpus.jsonl]

Numbers are written as tasks/game24.cpp writes them (numbers_text): sorted,
integers plain, fractions "p/q".
"""
import argparse
import csv
import itertools
import json
from fractions import Fraction


def text(numbers):
    return " ".join(str(n) for n in sorted(numbers))  # Fraction prints 3 or 3/4


def children(numbers):
    out = set()
    for i, j in itertools.combinations(range(len(numbers)), 2):
        a, b = numbers[i], numbers[j]
        rest = [n for k, n in enumerate(numbers) if k not in (i, j)]
        results = [a + b, a - b, b - a, a * b] + ([a / b] if b else []) + ([b / a] if a else [])
        out.update(text(rest + [r]) for r in results)
    return out


def covered_states(csv_path):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    test = {text([Fraction(int(x)) for x in r["Puzzles"].split()]) for r in rows[900:1000]}
    states = set()
    for puzzle in itertools.combinations_with_replacement(range(1, 14), 4):
        numbers = [Fraction(n) for n in puzzle]
        if text(numbers) in test:
            continue
        states.add(text(numbers))
        states.update(children(numbers))
    return states


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("judgments", help="JSONL from seed eval game24 --value-out")
    parser.add_argument("--corpus", help="a seed corpus JSONL: how many covered states its value examples hold")
    parser.add_argument("--game24-csv", default="tasks/game24/24.csv")
    args = parser.parse_args()

    covered = covered_states(args.game24_csv)
    with open(args.judgments) as f:
        judgments = [json.loads(line) for line in f if line.strip()]
    for name, keep in (("covered", True), ("not covered", False)):
        part = [j for j in judgments if (j["state"] in covered) == keep]
        agree = sum(j["model"] == j["solver"] for j in part)
        share = 100.0 * agree / len(part) if part else 0.0
        print(f"{name:>12}: {agree} of {len(part)} judgments agree with the solver ({share:.1f}%)")
    if args.corpus:
        seen = set()
        with open(args.corpus) as f:
            for line in f:
                example = json.loads(line)
                if example.get("task") == "game24" and example.get("kind") == "value":
                    seen.add(example["prompt"].rstrip("\n").split("\n")[-1])
        print(f"{args.corpus}: its value examples hold {len(seen & covered)} of the {len(covered)} covered "
              f"states ({100.0 * len(seen & covered) / len(covered):.0f}%)")


if __name__ == "__main__":
    main()
