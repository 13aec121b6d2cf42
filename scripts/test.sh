#!/bin/sh
# Builds and runs every test suite: the meson suites 'unit' (CPU) and 'gpu'
# (skipped, exit 77, without a GPU), then the Python package's pytest tests
# (tests/python: the sources in python/ with build/libjitgemm.so; GPU tests
# skip without an sm_90 GPU). Extra arguments go to `meson test` (e.g.
# --suite unit). Ends with the line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
sh scripts/build.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
meson test -C build --print-errorlogs "$@"
status=$?
junit=build/pytest-junit.xml
rm -f "$junit"
if python3 -c "import pytest, torch" 2>/dev/null; then
    JITGEMM_LIBRARY="$PWD/build/libjitgemm.so" PYTHONPATH="$PWD/python" \
        python3 -m pytest tests/python -q -rs -p no:cacheprovider --junitxml="$junit"
    [ $? -eq 0 ] || status=1  # 5, no test collected, fails too
else
    echo "pytest or torch is missing (scripts/install-deps.sh installs them): Python tests skipped"
    printf '<testsuite name="python" tests="1" skipped="1"><testcase name="tests/python">%s</testcase></testsuite>\n' \
        '<skipped message="pytest or torch missing"/>' > "$junit"
fi
python3 scripts/summarize.py build/meson-logs/testlog.json "$junit"
exit $status
