#!/bin/sh
# One device run: build, every test suite, the example, the benchmark.
# Logs and bench JSON go to $OUT (default ./bench/tmp; PACK=1 packs them into
# $OUT/all.tgz at the end: a device call returns 8 files). Usage on a GPU host:
#   sh bench/run-device.sh
set -u
OUT=${OUT:-bench/tmp}
mkdir -p "$OUT"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit \
    --format=csv | tee "$OUT/gpu.txt"
export JITGEMM_COMMIT=${JITGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
rm -rf build
{ meson setup build -Dbuildtype=release && ninja -C build; } > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
meson test -C build --print-errorlogs > "$OUT/tests.log" 2>&1
grep -E "^ *[0-9]+/|^Ok:|^Fail:|^Skipped:" "$OUT/tests.log"
grep -E "gemm_fuzz: [0-9]+ shapes|seed" build/meson-logs/testlog.txt | head -4
cp build/meson-logs/testlog.txt "$OUT/testlog.txt"
# The example twice: a cold compile into an empty cache, then a disk hit.
export JITGEMM_CACHE_DIR=$(mktemp -d)
./build/examples/gemm > "$OUT/example.log" 2>&1
./build/examples/gemm >> "$OUT/example.log" 2>&1
./build/examples/fp8_gemm >> "$OUT/example.log" 2>&1
./build/examples/nvfp4_gemm >> "$OUT/example.log" 2>&1
cat "$OUT/example.log"
./build/tools/jitgemm-bench --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
cut -c1-180 "$OUT/bench.log" | tail -26
# FP8 (issue 6): every dense and decode row with tensor scales, and the
# block-scaled 4096x7168x16384 target row.
./build/tools/jitgemm-bench --dtype fp8 --json "$OUT/bench-fp8.json" > "$OUT/bench-fp8.log" 2>&1
cut -c1-180 "$OUT/bench-fp8.log" | grep -E "^(square|prefill|decode)|geomean|peak|note"
./build/tools/jitgemm-bench --dtype fp8 --scale block --only prefill_4096x7168x16384 \
    > "$OUT/bench-fp8-block.log" 2>&1
cut -c1-180 "$OUT/bench-fp8-block.log" | grep -E "^prefill|note"
st=$?
if [ "${PACK:-0}" = 1 ]; then sh bench/pack-out.sh "$OUT"; fi
exit $st
