#!/bin/sh
# A fresh machine's first command: install the dependencies, build, install
# the Python package (pip install ., into the python3 on PATH), run the
# example (on a GPU machine a 4096^3 BF16 GEMM; without a GPU it compiles the
# example's kernel for sm_90a into the disk cache).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
sh scripts/build.sh
# meson-python and PyTorch come from install-deps.sh: no build isolation, no
# dependency resolution (a machine's own PyTorch build stays as it is).
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
    --break-system-packages . 2>/dev/null ||
    python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
./build/examples/gemm "$@"
