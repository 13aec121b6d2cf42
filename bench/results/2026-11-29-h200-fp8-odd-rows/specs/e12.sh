set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout $((400-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/odd-fp8.jsonl --rounds 1 --peer --out $OUT/odd --variant base= --variant c1=JITGEMM_CLUSTER=1 --variant ns2=JITGEMM_N_STACK=2 -- --reps 50 --energy > $OUT/odd.log 2>&1; echo "odd rc=$? at $(el)s"; tail -32 $OUT/odd.log
sh bench/pack-out.sh $OUT
