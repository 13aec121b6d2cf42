set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
if [ ! -x /tmp/b-base/build/tools/jitgemm-bench ]; then rm -rf /tmp/b-base; mkdir -p /tmp/b-base && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-base
(cd /tmp/b-base && patch -R -p1 < bench/tmp/rule.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }; fi
echo "builds at $(el)s"
for d in bf16 fp8 fp16; do t0=$(date +%s)
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/rt-$d-rows.jsonl --rounds 2 --peer --out $OUT/rt-$d --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant rule=BENCH=$PWD/build/tools/jitgemm-bench -- --reps 50 > $OUT/rt-$d.log 2>&1; echo "rt $d rc=$? $(( $(date +%s)-t0 ))s"; tail -40 $OUT/rt-$d.log | grep -v "^$" | tail -38
done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
