set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/b-base /tmp/b-min4; mkdir -p /tmp/b-base /tmp/b-min4 && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-base && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-min4
(cd /tmp/b-base && patch -R -p1 < bench/tmp/band.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
(cd /tmp/b-min4 && sed -i 's/sm90_bands\[\] = {1, 2, 3, 4,/sm90_bands[] = {4,/' src/codegen/plan_sm90.c && grep -c "sm90_bands\[\] = {4," src/codegen/plan_sm90.c && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-min4.log 2>&1 || { tail -30 $OUT/build-min4.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
BASE=BENCH=/tmp/b-base/build/tools/jitgemm-bench
MIN4=BENCH=/tmp/b-min4/build/tools/jitgemm-bench
for d in bf16 fp8; do t0=$(date +%s)
timeout 240 python3 bench/env_sweep.py --spec $PWD/bench/tmp/band2-$d.jsonl --rounds 1 --peer --out $OUT/band2-$d --variant base=$BASE --variant band= --variant min4=$MIN4 -- --reps 50 --energy > $OUT/band2-$d.log 2>&1; echo "band2 $d rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/band2-$d.log
done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
