set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 330 python3 bench/env_sweep.py --spec $PWD/bench/tmp/lm-bf16.jsonl --rounds 2 --peer --out $OUT/lm-bf16 --variant base= --variant c2=JITGEMM_CLUSTER=2 --variant t192=JITGEMM_TILE=192 --variant t192c2=JITGEMM_TILE=192,JITGEMM_CLUSTER=2 -- --reps 50 > $OUT/lm-bf16.log 2>&1; echo "lm bf16 rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/lm-bf16.log
t0=$(date +%s)
timeout $((570-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/lm-fp8t.jsonl --rounds 2 --peer --out $OUT/lm-fp8 --variant base= --variant c2=JITGEMM_CLUSTER=2 -- --reps 50 > $OUT/lm-fp8.log 2>&1; echo "lm fp8 rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/lm-fp8.log
echo "at $(el)s"
sh bench/pack-out.sh $OUT
