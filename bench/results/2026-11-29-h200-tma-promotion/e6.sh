set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/b-17 && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-17
(cd /tmp/b-17 && patch -p1 < bench/tmp/minm17.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-17.log 2>&1 || { tail -30 $OUT/build-17.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/offsmall-fp8.jsonl --rounds 2 --out $OUT/offsmall --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant m17=BENCH=/tmp/b-17/build/tools/jitgemm-bench -- --reps 50 > $OUT/offsmall.log 2>&1; echo "offsmall rc=$? at $(el)s"; cat $OUT/offsmall.log | tail -30
sh bench/pack-out.sh $OUT
