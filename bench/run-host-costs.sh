#!/bin/sh
# One device run for the host-side targets (issue 5), a GPU smoke test and the
# grouped peers (issue 4):
# build, unit suite, gemm_basic, a short fuzz, the grouped test, jitgemm-latency, jitgemm-warm
# on 64 kernels, and compute-sanitizer memcheck/racecheck over the gpu suite.
# Logs to $OUT.
set -u
OUT=${OUT:-bench/tmp}
mkdir -p "$OUT"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
nproc
{ meson setup build -Dbuildtype=release && ninja -C build; } > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
meson test -C build --suite unit --print-errorlogs > "$OUT/unit.log" 2>&1
grep -E "^Ok:|^Fail:|FAIL" "$OUT/unit.log"
./build/tests/test_gemm_basic > "$OUT/basic.log" 2>&1; echo "gemm_basic rc=$?"
./build/tests/test_gemm_fuzz --count 100 > "$OUT/fuzz.log" 2>&1; echo "fuzz rc=$?"; tail -1 "$OUT/fuzz.log"
./build/tests/test_grouped > "$OUT/grouped.log" 2>&1; echo "grouped rc=$?"; tail -3 "$OUT/grouped.log"
CUDA_CACHE_DISABLE=1 ./build/tools/jitgemm-latency 2>&1 | tee "$OUT/latency.log"
d=$(mktemp -d)
/usr/bin/time -f "warm wall %e s" ./build/tools/jitgemm-warm -j "$(nproc)" --cache-dir "$d" \
    bench/warm64.jsonl > "$OUT/warm.log" 2>&1
tail -6 "$OUT/warm.log"
# compute-sanitizer over the whole gpu suite (fewer random cases: the tools
# slow kernels ~100x), the twelve runs in parallel on the one GPU.
cs() { # tool name command...
    t=$1; n=$2; shift 2
    timeout 420 compute-sanitizer --tool "$t" --error-exitcode 99 "$@" > "$OUT/$t-$n.log" 2>&1
    echo "$t $n rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$t-$n.log" | tail -1)"
}
for t in memcheck racecheck; do
    cs $t basic ./build/tests/test_gemm_basic &
    cs $t fuzz ./build/tests/test_gemm_fuzz --count 24 --seed 7 &
    cs $t grouped ./build/tests/test_grouped --count 4 --seed 8 &
    cs $t fp8 ./build/tests/test_fp8 --count 2 --seed 9 &
    cs $t nvfp4 ./build/tests/test_nvfp4 --seed 10 &
    cs $t gnvfp4 ./build/tests/test_grouped_nvfp4 --count 2 --seed 11 &
done
wait
# Grouped GEMM (issue 4): the MoE example and the torch._grouped_mm peer.
timeout 120 ./build/examples/grouped_moe > "$OUT/grouped_moe.log" 2>&1
echo "grouped_moe rc=$?"; tail -6 "$OUT/grouped_moe.log"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/peer_torch.py --fp8 --lib build/libjitgemm.so \
    --json "$OUT/peer_torch.json" > "$OUT/peer_torch.log" 2>&1
echo "peer_torch rc=$?"; tail -12 "$OUT/peer_torch.log"
