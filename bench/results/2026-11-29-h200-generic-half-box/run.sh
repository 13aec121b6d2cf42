set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
for v in l2 box box16; do
  mkdir -p /tmp/b-$v && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-$v
  (cd /tmp/b-$v && patch -p1 < bench/tmp/$v.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-$v.log 2>&1 || { tail -30 $OUT/build-$v.log; exit 1; }
done
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
JITGEMM_LOG=plan timeout 120 build/tests/test_offline_plans --count 3000 > $OUT/offline-plans.log 2>&1; echo "offline_plans rc=$?"; grep -v "jitgemm info \[plan\]: m=" $OUT/offline-plans.log | tail -25
B=BENCH=$PWD/build/tools/jitgemm-bench
for d in bf16 fp8; do t0=$(date +%s)
timeout 260 python3 bench/env_sweep.py --spec $PWD/bench/tmp/l2-$d.jsonl --rounds 2 --out $OUT/l2-$d --variant base=$B --variant l2=BENCH=/tmp/b-l2/build/tools/jitgemm-bench -- --reps 50 > $OUT/l2-$d.log 2>&1; echo "l2 $d rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/l2-$d.log
done
echo "at $(el)s"
t0=$(date +%s)
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/tmp/gbox-rows.jsonl --rounds 2 --out $OUT/gbox --variant base=$B --variant box=BENCH=/tmp/b-box/build/tools/jitgemm-bench --variant box16=BENCH=/tmp/b-box16/build/tools/jitgemm-bench -- --reps 50 > $OUT/gbox.log 2>&1; echo "gbox rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/gbox.log
echo "at $(el)s"
sh bench/pack-out.sh $OUT
