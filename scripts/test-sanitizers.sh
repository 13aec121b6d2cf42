#!/bin/sh
# The 'unit' suite again (but the SASS test: NVRTC and cuobjdump, not ours),
# built with AddressSanitizer and UBSan (build-asan/).
# Any report fails the test that triggered it.
set -u
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f build-asan/build.ninja ]; then
    werror=false
    [ "${CI:-}" = "true" ] && werror=true
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuildtype=debug -Dwerror=$werror >/dev/null || exit 1
fi
ninja -C build-asan || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
meson test -C build-asan --suite unit --no-suite sass --print-errorlogs "$@"
status=$?
python3 scripts/summarize.py build-asan/meson-logs/testlog.json
exit $status
