#!/usr/bin/env python3
"""Checks results.jsonl for scripts/faults.sh.

  faults_results.py lines RESULTS
      Every line that ends in a newline is a JSON object with an "index";
      only a last line may lack its newline (a write cut short, which
      --resume drops). Prints the number of whole lines and "torn" or
      "whole"; exits 1 naming the first bad line otherwise.
  faults_results.py compare RESULTS REFERENCE
      Every problem of REFERENCE (a clean run's results.jsonl) is in
      RESULTS exactly once, nothing else is, and each one's outcome equals
      the clean run's (the fields a seeded run determines, not timings or
      the engine's draft counts, which depend on thread timing).
"""
import json
import sys

# What the run's seed and the models determine.
DETERMINED = ("index", "problem", "answer", "answer_text", "correct", "reason", "tree",
              "requests", "failed_requests", "thought_tokens", "evaluation_tokens", "tokens")


def records(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return [], False  # stopped before its first result
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" when the file ends whole
    parsed = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError as e:
            sys.exit(f"{path}: line {number} is not JSON ({e}): {line[:80]!r}")
        if not isinstance(record, dict) or "index" not in record:
            sys.exit(f"{path}: line {number} has no \"index\"")
        parsed.append(record)
    return parsed, torn != b""


def main():
    command, path = sys.argv[1], sys.argv[2]
    kept, torn = records(path)
    if command == "lines":
        print(len(kept), "torn" if torn else "whole")
        return
    reference, _ = records(sys.argv[3])
    if torn:
        sys.exit(f"{path}: the last line is torn after --resume")
    seen = {}
    for record in kept:
        if record["index"] in seen:
            sys.exit(f"{path}: problem {record['index']} appears twice")
        seen[record["index"]] = record
    expected = {r["index"]: r for r in reference}
    if sorted(seen) != sorted(expected):
        sys.exit(f"{path}: problems {sorted(seen)}, the clean run has {sorted(expected)}")
    for index, want in expected.items():
        for field in DETERMINED:
            if seen[index].get(field) != want.get(field):
                sys.exit(f"{path}: problem {index}: {field} is {seen[index].get(field)!r}, "
                         f"the clean run's is {want.get(field)!r}")
    print(len(kept), "equal")


if __name__ == "__main__":
    main()
