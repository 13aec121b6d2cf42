#!/usr/bin/env python3
"""Prints "N passed, N failed, N skipped" over one or more meson testlog.json files."""
import json
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        counts["failed"] += 1  # a suite that produced no log did not pass
        continue
    for line in lines:
        result = json.loads(line)["result"]
        counts[{"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(result, "failed")] += 1
print("%(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
