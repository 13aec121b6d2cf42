#!/bin/sh
# A fresh machine's first command: install, build, run the example (on a GPU
# machine a 4096^3 BF16 GEMM; without a GPU it compiles the example's kernel
# for sm_90a into the disk cache).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
sh scripts/build.sh
./build/examples/gemm "$@"
