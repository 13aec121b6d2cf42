set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-pf8 && mkdir /tmp/b-pf8 && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-pf8 && (cd /tmp/b-pf8 && patch -p1 -s < bench/patches/swap-pairs-fp8.patch) || echo PATCH FAIL
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-pf8 && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench tests/test_any_fuzz tests/test_fp8) > $OUT/build-pf8.log 2>&1 &
wait
ls build/tools/jitgemm-bench /tmp/b-pf8/build/tools/jitgemm-bench || { tail -20 $OUT/build-*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=$(mktemp -d) JITGEMM_COMMIT=b4b7b47
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/results/2026-11-29-h200-swap-pairs-fp8/rows.jsonl --rounds 2 --out $OUT/sw-pf8 --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant pf8=BENCH=/tmp/b-pf8/build/tools/jitgemm-bench -- --energy > $OUT/sweep-pf8.txt 2>&1
(cd /tmp/b-pf8 && JITGEMM_N_STACK=2 JITGEMM_SWAP=1 JITGEMM_SPLIT=1 timeout 70 build/tests/test_any_fuzz --count 200) > $OUT/anyfuzz-pf8.log 2>&1
timeout 60 /tmp/b-pf8/build/tools/jitgemm-bench --spec $PWD/bench/results/2026-11-29-h200-swap-pairs-fp8/rows.jsonl --pooled --no-peer --reps 50 --json $OUT/pf8-check.json > $OUT/pf8-check.log 2>&1
