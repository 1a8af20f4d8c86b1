#!/usr/bin/env python3
"""Names every test a suite skipped, with its reason, from the suite's output (run-suites.sh).

A green `make test` must not hide what it did not run: a part missing on the machine (promtool,
docker compose, io_uring, a cipher the JDK lacks) makes a test skip itself, and only a count would
say so. What is read:
- pytest run with --junitxml=build/test-reports/NAME.xml: that report's skipped test cases;
- node --test with the TAP reporter: `ok N - name # SKIP reason` in the output;
- Maven Surefire: a class's `Tests run: …, Skipped: N, … - in CLASS` line in the output, then the
  skipped test cases in that class's TEST-CLASS.xml in a module's target/surefire-reports/.
Only reports written since the suite started count. The cases of one parametrized test skipped
for one reason make one line.

Usage: list-skips.py LOG SINCE_EPOCH_SECONDS; prints one line per skipped test: `name: reason`.
"""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

TAP = re.compile(r"^\s*ok \d+ - (.+?) # SKIP\s*(.*)$")
# Surefire 3 ends the line with "-- in CLASS", 2 with "- in CLASS"
SUREFIRE = re.compile(r"Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: ([1-9]\d*).*? -+ in (\S+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


PYTEST_REPORTS = "build/test-reports/*.xml"
SUREFIRE_REPORTS = ("*/target/surefire-reports/TEST-{}.xml", "*/*/target/surefire-reports/TEST-{}.xml")


def junit_skips(paths, since: float) -> list[str]:
    """`name: reason` per skipped case of the JUnit XML reports written since `since`, the cases of
    one parametrized test (name[…]) with one reason counted on one line, in the reports' order."""
    grouped: dict = {}
    for path in paths:
        if os.path.getmtime(path) < since:
            continue
        for case in ET.parse(path).getroot().iter("testcase"):
            skipped = case.find("skipped")
            if skipped is None:
                continue
            lines = (skipped.get("message") or skipped.text or "").strip().splitlines()
            reason = lines[0] if lines else "no reason given"
            where = (case.get("classname") or "").rsplit(".", 1)[-1]
            name = f"{where}.{case.get('name', '?').split('[', 1)[0]}"
            grouped[(name, reason)] = grouped.get((name, reason), 0) + 1
    return [f"{name}{f' ({n} cases)' if n > 1 else ''}: {reason}" for (name, reason), n in grouped.items()]


def skips(lines, since: float) -> list[str]:
    out = []
    for raw in lines:
        line = ANSI.sub("", raw.rstrip("\n"))
        if m := TAP.match(line):
            out.append(f"{m.group(1)}: {m.group(2) or 'no reason given'}")
        elif m := SUREFIRE.search(line):
            paths = [p for pattern in SUREFIRE_REPORTS for p in glob.glob(pattern.format(m.group(2)))]
            named = junit_skips(paths, since)
            out.extend(named or [f"{m.group(2)} ({m.group(1)} tests): its report was not found"])
    return out + junit_skips(sorted(glob.glob(PYTEST_REPORTS)), since)


def main(argv) -> int:
    log, since = argv[1], float(argv[2])
    with open(log, encoding="utf-8", errors="replace") as f:
        for entry in skips(f, since):
            print(entry)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
