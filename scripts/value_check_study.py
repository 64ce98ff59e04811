#!/usr/bin/env python3
"""Where a model's three-number value checks go wrong, and what a longer check would cost.

  matches: runs the model greedily (`seed generate`) on 25 solvable and 25
      impossible three-number states of a `seed eval game24 --value-out`
      file, parses each check line `z: needs | x y: makes | match`, and counts
      lines whose two lists are right, matches the model's own lists hold,
      matches it wrote (and how many of those are in both lists), and
      matches it missed.
  lengths: mean characters of the shipped check (tasks/game24_value_check.cpp)
      and of a check that only asks whether 24 appears (for each value a pair
      makes, the two-number check of that value with the third number), over
      the three-number states of the file.

  build/launch/seed eval game24 --model models/zoo/tiny-target --limit 30 --value-out values.jsonl
  python3 scripts/value_check_study.py matches values.jsonl --model models/zoo/tiny-target
  python3 scripts/value_check_study.py lengths values.jsonl
"""
import argparse
import json
import random
import subprocess
from fractions import Fraction

PROMPT = "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n"  # corpus_formats.h


def fmt(x):
    return str(x)  # Fraction prints 3 or 3/4, as numbers_text does


def distinct(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def pair_results(x, y):  # game24_value_check's order, x <= y
    x, y = sorted((x, y))
    return distinct([x + y, y - x, x - y, x * y] + ([y / x] if x else []) + ([x / y] if y else []))


def partners_for_24(z):
    return distinct([24 - z, 24 + z, z - 24] + ([Fraction(24) / z, 24 * z, z / 24] if z else []))


def pairs_with_third(state):  # (pair, third) in game24_value_check's order, repeated pairs once
    s, seen = sorted(state), set()
    for k in (2, 1, 0):
        pair = tuple(s[i] for i in range(3) if i != k)
        if pair not in seen:
            seen.add(pair)
            yield pair, s[k]


def shipped_check(state):
    text = ""
    for (x, y), z in pairs_with_third(state):
        needs, makes = partners_for_24(z), pair_results(x, y)
        both = [r for r in makes if r in needs]
        match = next((r for r in both if r.denominator == 1), both[0] if both else None)
        text += f"{fmt(z)}: {' '.join(map(fmt, needs))} | {fmt(x)} {fmt(y)}: {' '.join(map(fmt, makes))} | "
        text += (fmt(match) if match is not None else "no") + "\n"
        if match is not None and match.denominator == 1:
            break
    return text


def only_24_check(state):
    text = ""
    for (x, y), z in pairs_with_third(state):
        makes = pair_results(x, y)
        text += f"{fmt(x)} {fmt(y)}: {' '.join(map(fmt, makes))}\n"
        for r in makes:
            a, b = sorted((r, z))
            results = pair_results(a, b)
            hit = Fraction(24) in results
            text += f"{fmt(a)} {fmt(b)}: {' '.join(map(fmt, results))} | {'24' if hit else 'no'}\n"
            if hit and r.denominator == 1:
                return text
    return text


def three_number_states(path):
    rows = [json.loads(line) for line in open(path)]
    return [r for r in rows if len(r["state"].split()) == 3]


def matches(args):
    states = three_number_states(args.values)
    rng = random.Random(0)
    sure = [s for s in states if s["solver"] == "sure"]
    impossible = [s for s in states if s["solver"] == "impossible"]
    picked = rng.sample(sure, min(25, len(sure))) + rng.sample(impossible, min(25, len(impossible)))
    counts = dict(lines=0, lists_right=0, matches_in_lists=0, written=0, written_right=0, missed=0)
    for s in picked:
        out = subprocess.run(
            [args.seed, "--threads", "1", "--log-level", "error", "generate", "--model", args.model,
             "--temperature", "0", "--max-new-tokens", "320", "--prompt", PROMPT + s["state"] + "\n"],
            capture_output=True, text=True, check=True).stdout
        for line in out[len(PROMPT) + len(s["state"]) + 1:].splitlines():
            fields = line.split("|")
            if len(fields) != 3:
                continue
            try:
                z, needs = fields[0].split(":")
                pair, makes = fields[1].split(":")
                z, (x, y) = Fraction(z.strip()), [Fraction(t) for t in pair.split()]
                needs, makes = [Fraction(t) for t in needs.split()], [Fraction(t) for t in makes.split()]
            except ValueError:
                continue  # not a check line
            counts["lines"] += 1
            counts["lists_right"] += needs == partners_for_24(z) and makes == pair_results(x, y)
            both = set(needs) & set(makes)
            counts["matches_in_lists"] += bool(both)
            written = fields[2].strip()
            if written == "no":
                counts["missed"] += bool(both)
                continue
            counts["written"] += 1
            try:
                counts["written_right"] += Fraction(written) in both
            except ValueError:
                pass
    print(f"{args.model}: {len(picked)} three-number states, {json.dumps(counts)}")


def lengths(args):
    states = [[Fraction(t) for t in s["state"].split()] for s in three_number_states(args.values)]
    shipped = sum(len(shipped_check(s)) for s in states) / len(states)
    only_24 = sum(len(only_24_check(s)) for s in states) / len(states)
    print(f"{len(states)} three-number states: shipped check {shipped:.0f} characters on average, "
          f"24-only check {only_24:.0f} ({only_24 / shipped:.1f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("matches")
    m.add_argument("values", help="a `seed eval game24 --value-out` file")
    m.add_argument("--model", required=True)
    m.add_argument("--seed", default="build/launch/seed", help="the seed binary")
    m.set_defaults(run=matches)
    n = commands.add_parser("lengths")
    n.add_argument("values", help="a `seed eval game24 --value-out` file")
    n.set_defaults(run=lengths)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
