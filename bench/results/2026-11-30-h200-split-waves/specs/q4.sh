set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/base; mkdir -p /tmp/base && tar xzf bench/tmp/base.tgz -C /tmp/base && (cd /tmp/base && meson setup build -Dbuildtype=release > /dev/null 2>&1 && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
B=BENCH=/tmp/base/build/tools/jitgemm-bench
export JITGEMM_COMMIT=$(cat bench/tmp/commit)+margin
for d in bf16 fp8; do
timeout $((230+230*$( [ $d = fp8 ] && echo 1 || echo 0)-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/margin-$d.jsonl --rounds 1 --peer --out $OUT/margin-$d --variant base=$B --variant new= -- --reps 50 --energy > $OUT/margin-$d.log 2>&1; echo "margin $d rc=$? at $(el)s"; tail -7 $OUT/margin-$d.log
done
sh bench/pack-out.sh $OUT
