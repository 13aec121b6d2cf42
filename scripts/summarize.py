#!/usr/bin/env python3
"""Prints "N passed, N failed, N skipped" over meson testlog.json files and
pytest's JUnit XML files (*.xml)."""
import json
import sys
import xml.etree.ElementTree as ET

counts = {"passed": 0, "failed": 0, "skipped": 0}


def add_junit(path):
    root = ET.parse(path).getroot()
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        counts["passed"] += tests - skipped - failed
        counts["failed"] += failed
        counts["skipped"] += skipped


def add_meson(lines):
    for line in lines:
        result = json.loads(line)["result"]
        counts[{"OK": "passed", "EXPECTEDFAIL": "passed", "SKIP": "skipped"}.get(result, "failed")] += 1


for path in sys.argv[1:]:
    try:
        if path.endswith(".xml"):
            add_junit(path)
        else:
            add_meson(open(path).read().splitlines())
    except (OSError, ET.ParseError):
        counts["failed"] += 1  # a suite that produced no log did not pass
print("%(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
