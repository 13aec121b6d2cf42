set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=/tmp/c-odd
timeout 100 build/tools/jitgemm-bench --spec $PWD/bench/tmp/odd2-check.jsonl --reps 50 --no-peer --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$? at $(el)s"; grep -ci "fail\|mismatch" $OUT/check.log; python3 -c "
import json; r=json.load(open('$OUT/check.json'))['rows']; print('kernels', [x.get('kernel')[-40:] for x in r]); print('checks', sorted({str(x.get('check')) for x in r}), 'max rel', max(x.get('rel_diff') or 0 for x in r), 'mismatch', sum(x.get('mismatch') or 0 for x in r))"
unset JITGEMM_CACHE_DIR
timeout $((560-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/odd2-fp8.jsonl --rounds 2 --peer --out $OUT/odd2 --variant base=JITGEMM_N_STACK=1 --variant rule= -- --reps 50 --energy > $OUT/odd2.log 2>&1; echo "odd2 rc=$? at $(el)s"; tail -32 $OUT/odd2.log
sh bench/pack-out.sh $OUT
