#!/bin/sh
# Builds and runs every test suite: 'unit' (CPU) and 'gpu' (skipped, exit 77,
# without a GPU). Extra arguments go to `meson test` (e.g. --suite unit).
# Ends with the line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
sh scripts/build.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
meson test -C build --print-errorlogs "$@"
status=$?
python3 scripts/summarize.py build/meson-logs/testlog.json
exit $status
