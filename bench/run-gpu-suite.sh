#!/bin/sh
# The whole GPU suite in about six minutes on one GPU host: the built tests
# of meson's `gpu` suite run as four parallel streams (the two longest,
# test_fp8 and test_any_fuzz, alone), without the kernel cache
# (JITGEMM_CACHE=off: every kernel compiled by the tree under test), each
# test under a shared deadline. Logs go to $OUT/gpu-tests/test-NAME.log,
# one line per test ("NAME rc=R Ss") to $OUT/gpu-tests/summary.txt and
# stdout, then each log's last lines and "N passed, N failed, N skipped"
# (rc 0, other, 77: no GPU, or test_backends in a build without LLVM).
# Exit status: 0 when none failed and one passed or more, else 1.
#
#   OUT=DIR [DEADLINE=400] sh bench/run-gpu-suite.sh
#
# Run from the repository root after building into build/ (as
# bench/run-device.sh does); DEADLINE is the seconds after which a test
# still running is stopped (timeout's rc 124).
set -u
OUT=${OUT:-bench/tmp}
DEADLINE=${DEADLINE:-400}
dir="$OUT/gpu-tests"
mkdir -p "$dir"
start=$(date +%s)
export JITGEMM_CACHE=off

run() {
    name=$1
    shift
    t0=$(date +%s)
    left=$((DEADLINE - (t0 - start)))
    [ "$left" -gt 0 ] || left=1
    timeout "$left" "$@" > "$dir/test-$name.log" 2>&1
    echo "$name rc=$? $(($(date +%s) - t0))s"
}

(run fp8 build/tests/test_fp8) > "$dir/s1.txt" &
(run nvfp4 build/tests/test_nvfp4; run grouped_nvfp4 build/tests/test_grouped_nvfp4
 run backends build/tests/test_backends bench/shapes.jsonl) > "$dir/s2.txt" &
(run any_fuzz build/tests/test_any_fuzz) > "$dir/s3.txt" &
(run gemm_basic build/tests/test_gemm_basic; run grouped build/tests/test_grouped
 run pdl build/tests/test_pdl; run run_in_context build/tests/test_run_in_context
 run many_kernels build/tests/test_many_kernels
 run offline_plans build/tests/test_offline_plans --dims bench/model-dims.json
 run gemm_fuzz build/tests/test_gemm_fuzz) > "$dir/s4.txt" &
wait
cat "$dir/s1.txt" "$dir/s2.txt" "$dir/s3.txt" "$dir/s4.txt" > "$dir/summary.txt"
rm -f "$dir"/s[1-4].txt
cat "$dir/summary.txt"
for f in "$dir"/test-*.log; do
    echo "== $f"
    tail -2 "$f"
done
passed=$(grep -c ' rc=0 ' "$dir/summary.txt")
skipped=$(grep -c ' rc=77 ' "$dir/summary.txt")
failed=$(grep -vc -e ' rc=0 ' -e ' rc=77 ' "$dir/summary.txt")
echo "gpu suite: $passed passed, $failed failed, $skipped skipped in $(($(date +%s) - start))s"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
