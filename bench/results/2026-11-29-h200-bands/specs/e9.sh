set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/b-base; mkdir -p /tmp/b-base && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-base
(cd /tmp/b-base && patch -R -p1 < bench/tmp/trim.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=/tmp/c-trim
timeout 60 build/tools/jitgemm-bench --spec $PWD/bench/tmp/trim-bf16.jsonl --reps 50 --no-peer --json $OUT/check.json > $OUT/check.log 2>&1; echo "check rc=$? at $(el)s"; grep -ci "fail\|mismatch" $OUT/check.log; python3 -c "
import json; r=json.load(open('$OUT/check.json'))['rows']; print('checks', sorted({str(x.get('check')) for x in r}), 'max rel', max(x.get('rel_diff') or 0 for x in r), 'mismatch', sum(x.get('mismatch') or 0 for x in r))"
unset JITGEMM_CACHE_DIR
JITGEMM_CACHE=off timeout 60 build/tests/test_gemm_fuzz --count 150 > $OUT/fuzz.log 2>&1; echo "fuzz rc=$? at $(el)s"; tail -2 $OUT/fuzz.log
timeout $((300-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/trim-bf16.jsonl --rounds 2 --peer --out $OUT/trim --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant trim= -- --reps 50 --energy > $OUT/trim.log 2>&1; echo "trim rc=$? at $(el)s"; tail -9 $OUT/trim.log
sh bench/pack-out.sh $OUT
