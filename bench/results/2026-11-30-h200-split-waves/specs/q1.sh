set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/base && tar xzf bench/tmp/base.tgz -C /tmp/base && (cd /tmp/base && meson setup build -Dbuildtype=release > /dev/null 2>&1 && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
B=BENCH=/tmp/base/build/tools/jitgemm-bench
export JITGEMM_COMMIT=$(cat bench/tmp/commit)+guard
for d in bf16 fp8; do
timeout $((130+70*$( [ $d = fp8 ] && echo 1 || echo 0)-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/probe-rows-$d.jsonl --rounds 1 --peer --out $OUT/probe-$d --variant base=$B --variant new= --variant unsplit=$B,JITGEMM_SPLIT=1 -- --reps 50 --energy > $OUT/probe-$d.log 2>&1; echo "probe $d rc=$? at $(el)s"; tail -14 $OUT/probe-$d.log
done
timeout $((450-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/ab-rows-bf16.jsonl --rounds 1 --peer --out $OUT/ab-bf16 --variant base=$B --variant new= -- --reps 50 --energy > $OUT/ab-bf16.log 2>&1; echo "ab bf16 rc=$? at $(el)s"; tail -6 $OUT/ab-bf16.log
timeout $((575-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/ab-rows-fp8.jsonl --rounds 1 --peer --out $OUT/ab-fp8 --variant base=$B --variant new= -- --reps 50 --energy > $OUT/ab-fp8.log 2>&1; echo "ab fp8 rc=$? at $(el)s"; tail -6 $OUT/ab-fp8.log
sh bench/pack-out.sh $OUT
