set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=/tmp/c-dp
JITGEMM_SPLIT_WS=5 JITGEMM_SPLIT_DP=1 timeout 100 build/tools/jitgemm-bench --spec $PWD/bench/tmp/skdp-check.jsonl --reps 50 --no-peer --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$? at $(el)s"; grep -ci "fail\|mismatch" $OUT/check.log; python3 -c "
import json; r=json.load(open('$OUT/check.json'))['rows']; print('kernels', [x.get('kernel') for x in r][:3]); print('checks', sorted({str(x.get('check')) for x in r}), 'max rel', max(x.get('rel_diff') or 0 for x in r), 'mismatch', sum(x.get('mismatch') or 0 for x in r))"
unset JITGEMM_CACHE_DIR
JITGEMM_CACHE=off timeout 120 build/tests/test_gemm_fuzz --count 400 > $OUT/fuzz.log 2>&1; echo "fuzz rc=$? at $(el)s"; grep -i "fail" $OUT/fuzz.log | head; tail -3 $OUT/fuzz.log
timeout $((560-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/skdp-bf16.jsonl --rounds 1 --peer --out $OUT/dp --variant base=JITGEMM_SPLIT_DP=0 --variant rule= --variant any=JITGEMM_SPLIT_DP=1 --variant dp6=JITGEMM_SPLIT_WS=6,JITGEMM_SPLIT_DP=1 -- --reps 50 --energy > $OUT/dp.log 2>&1; echo "dp rc=$? at $(el)s"; tail -40 $OUT/dp.log
sh bench/pack-out.sh $OUT
