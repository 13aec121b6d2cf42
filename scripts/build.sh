#!/bin/sh
# Configures (once) and builds into ./build. CI=true adds -Werror.
set -eu
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f build/build.ninja ]; then
    werror=false
    [ "${CI:-}" = "true" ] && werror=true
    meson setup build -Dwerror=$werror >/dev/null
fi
ninja -C build
