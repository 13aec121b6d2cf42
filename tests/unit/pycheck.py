"""The unit checks' count of failures: check(ok, what) prints what failed;
finish(name) prints the outcome and exits 1 after any failure."""
import sys

failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL: {what}")


def finish(name):
    print(f"{name}:", "ok" if not failures else f"{failures} failure(s)")
    sys.exit(1 if failures else 0)
