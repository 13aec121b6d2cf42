set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/base && tar xzf bench/tmp/base.tgz -C /tmp/base && (cd /tmp/base && meson setup build -Dbuildtype=release > /dev/null 2>&1 && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "built at $(el)s"; nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit)+rules
BASE=/tmp/base/build/tools/jitgemm-bench
mkdir -p $OUT/few64-bf16 $OUT/onerow-fp8
timeout 130 python3 bench/env_sweep.py --spec $PWD/bench/tmp/few64-bf16.jsonl --rounds 1 --peer --out $OUT/few64-bf16 \
  --variant base=BENCH=$BASE --variant new= -- --reps 50 --energy > $OUT/few64-bf16.log 2>&1; echo "few64-bf16 rc=$? at $(el)s"
tail -6 $OUT/few64-bf16.log
timeout 130 python3 bench/env_sweep.py --spec $PWD/bench/tmp/onerow-fp8.jsonl --rounds 1 --peer --out $OUT/onerow-fp8 \
  --variant base=BENCH=$BASE --variant new= -- --reps 50 --energy > $OUT/onerow-fp8.log 2>&1; echo "onerow-fp8 rc=$? at $(el)s"
tail -6 $OUT/onerow-fp8.log
timeout 40 build/tools/jitgemm-bench --spec $PWD/bench/tmp/onerow-fp8.jsonl --only c0,c1,c2,c3 --reps 50 --no-peer --json $OUT/onerow-check.json > $OUT/onerow-check.log 2>&1; echo "check rc=$? at $(el)s"
sh bench/pack-out.sh $OUT
