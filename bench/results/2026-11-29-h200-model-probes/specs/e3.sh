set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/b-cap; mkdir -p /tmp/b-cap && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-cap
(cd /tmp/b-cap && patch -p1 < bench/tmp/cap.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-cap.log 2>&1 || { tail -30 $OUT/build-cap.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
C=BENCH=/tmp/b-cap/build/tools/jitgemm-bench
for d in bf16 fp8; do t0=$(date +%s)
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/tmp/cap-$d.jsonl --rounds 2 --peer --out $OUT/cap-$d --variant base= --variant cap90=$C,JITGEMM_CAP_FRAC=0.9,JITGEMM_CAP_WAVES=4 --variant cap85=$C,JITGEMM_CAP_FRAC=0.85,JITGEMM_CAP_WAVES=4 -- --reps 50 > $OUT/cap-$d.log 2>&1; echo "cap $d rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/cap-$d.log
done
echo "at $(el)s"
if [ $(el) -lt 420 ]; then t0=$(date +%s)
timeout $((560-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/cap-bf16.jsonl --rounds 1 --peer --out $OUT/cap-energy --variant base= --variant cap90=$C,JITGEMM_CAP_FRAC=0.9,JITGEMM_CAP_WAVES=4 -- --reps 50 --energy > $OUT/cap-energy.log 2>&1; echo "energy rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/cap-energy.log
fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
