set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
t0=$(date +%s)
(meson setup build -Dbuildtype=release > /dev/null; ninja -C build tools/jitgemm-bench tests/test_gemm_fuzz tests/test_gemm_basic) > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 ))s"; nvidia-smi --query-gpu=name --format=csv,noheader
export JITGEMM_CACHE_DIR=$(mktemp -d)
t0=$(date +%s)
timeout 45 build/tools/jitgemm-bench --spec $PWD/bench/tmp/pairs-check.jsonl --pooled --no-peer --json $OUT/pairs-check.json > $OUT/pairs-check.log 2>&1; echo "pairs rows checked rc=$? $(( $(date +%s)-t0 ))s"
grep -E "mismatch|MISMATCH|ERROR|geomean|rows" $OUT/pairs-check.log | head -5
t0=$(date +%s)
timeout 60 build/tests/test_gemm_fuzz --count 250 > $OUT/gemm-fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/gemm-fuzz.log
t0=$(date +%s)
timeout 40 build/tests/test_gemm_basic > $OUT/gemm-basic.log 2>&1; echo "gemm_basic rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/gemm-basic.log
