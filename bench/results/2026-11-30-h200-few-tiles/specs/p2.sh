set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/base && tar xzf bench/tmp/base.tgz -C /tmp/base && (cd /tmp/base && meson setup build -Dbuildtype=release > /dev/null 2>&1 && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "built at $(el)s"; nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit)+few
BASE=/tmp/base/build/tools/jitgemm-bench
mkdir -p $OUT/few-bf16 $OUT/ns-fp8 $OUT/few-fp16
timeout 290 python3 bench/env_sweep.py --spec $PWD/bench/tmp/few-bf16.jsonl --rounds 2 --peer --out $OUT/few-bf16 \
  --variant base=BENCH=$BASE --variant new= -- --reps 50 --energy > $OUT/few-bf16.log 2>&1; echo "few-bf16 rc=$? at $(el)s"
tail -8 $OUT/few-bf16.log
timeout 60 build/tools/jitgemm-bench --spec $PWD/bench/tmp/few-check.jsonl --reps 50 --no-peer --json $OUT/few-check.json > $OUT/few-check.log 2>&1; echo "check rc=$? at $(el)s"
grep -iE 'mismatch|fail|max rel|error' $OUT/few-check.log | head -5
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/ns-fp8.jsonl --rounds 1 --out $OUT/ns-fp8 \
  --variant base= --variant ns2=JITGEMM_N_STACK=2 --variant ns4=JITGEMM_N_STACK=4 -- --reps 50 --energy > $OUT/ns-fp8.log 2>&1; echo "ns-fp8 rc=$? at $(el)s"
tail -8 $OUT/ns-fp8.log
left=$((560-$(el)))
[ $left -gt 40 ] && { timeout $left python3 bench/env_sweep.py --spec $PWD/bench/tmp/few-fp16.jsonl --rounds 1 --out $OUT/few-fp16 \
  --variant base=BENCH=$BASE --variant new= -- --reps 50 --energy > $OUT/few-fp16.log 2>&1; echo "few-fp16 rc=$? at $(el)s"; tail -5 $OUT/few-fp16.log; }
sh bench/pack-out.sh $OUT
