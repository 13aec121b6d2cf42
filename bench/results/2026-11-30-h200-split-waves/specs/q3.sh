set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit)
for d in bf16 fp8; do
timeout $((170+180*$( [ $d = fp8 ] && echo 1 || echo 0)-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst-$d.jsonl --rounds 1 --peer --out $OUT/worst-$d --variant plan= --variant tune=JITGEMM_TUNE=1 --variant ns2=JITGEMM_N_STACK=2 --variant ns4=JITGEMM_N_STACK=4 --variant swap=JITGEMM_SWAP=1 -- --reps 50 --energy > $OUT/worst-$d.log 2>&1; echo "worst $d rc=$? at $(el)s"; tail -22 $OUT/worst-$d.log
done
sh bench/pack-out.sh $OUT
