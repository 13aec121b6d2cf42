#!/bin/sh
# Builds the spec parser's libFuzzer target with clang (ASan + UBSan) and runs
# it from the seed corpus. Usage: tests/fuzz/run-spec-fuzz.sh [SECONDS] (600).
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-600}
out=${TMPDIR:-/tmp}/jg_spec_fuzz
mkdir -p "$out/corpus"
cp tests/fuzz/corpus/spec/* "$out/corpus/"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I tools tests/fuzz/spec_fuzz.c tools/spec.c -ljansson -o "$out/spec_fuzz"
"$out/spec_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -print_final_stats=1 "$out/corpus"
