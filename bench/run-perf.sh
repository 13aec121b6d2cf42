#!/bin/sh
# One device run for performance work: build, the full benchmark (JSON), the
# memset-flush comparison on decode rows, host launch costs, a tile sweep of
# the grouped rows, and an Nsight Compute profile of a few of our kernels.
# Every log is packed into $OUT/logs.tgz (the device tool returns 8 files).
#   JITGEMM_COMMIT=<sha> sh bench/run-perf.sh
set -u
OUT=${OUT:-bench/tmp}
L=$OUT/logs
mkdir -p "$L"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$L/gpu.txt"
export JITGEMM_COMMIT=${JITGEMM_COMMIT:-unknown}
{ meson setup build -Dbuildtype=release && ninja -C build; } > "$L/build.log" 2>&1 ||
    { tail -40 "$L/build.log"; exit 1; }
export JITGEMM_CACHE_DIR=$(mktemp -d)
./build/tools/jitgemm-warm -j "$(nproc)" bench/shapes.jsonl > "$L/warm.log" 2>&1
./build/tools/jitgemm-bench --json "$OUT/bench.json" > "$L/bench.log" 2>&1
echo "bench rc=$?"; cut -c1-200 "$L/bench.log" | grep -v "^ *$" | tail -34
./build/tools/jitgemm-bench --flush memset --only decode_m1_7168x2048,decode_m64_4096x7168,seed_group4 \
    > "$L/bench-memset.log" 2>&1
echo "== memset flush"; cut -c1-120 "$L/bench-memset.log" | grep -E "^(decode|seed)"
for b in 32 256; do
    CUDA_CACHE_DISABLE=1 ./build/tools/jitgemm-latency --compiles 3 --batch $b 2>&1 | grep -v "^cold\|^disk"
done | tee "$L/latency.log"
[ -n "${SWEEP_SHAPES:-}" ] && sh bench/tile-sweep.sh "$SWEEP_SHAPES" ${SWEEP_TILES:-} 2>&1 | tee "$L/sweep.log"
for shape in $(echo "${NCU_SHAPES:-}" | tr , ' '); do
    timeout 120 ncu --kernel-name regex:^jg_g --launch-skip 5 --launch-count 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
        --section LaunchStats --section Occupancy \
        ./build/tools/jitgemm-bench --no-peer --reps 50 --only "$shape" > "$L/ncu-$shape.log" 2>&1
    echo "== ncu $shape rc=$?"
    grep -E "^  jg_|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|Max Bandwidth|Mem Busy|Registers Per|Achieved Occ" \
        "$L/ncu-$shape.log" | head -16
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
