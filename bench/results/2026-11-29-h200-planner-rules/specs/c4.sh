set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
for n in sk sure; do
rm -rf /tmp/b-$n && mkdir /tmp/b-$n && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-$n && (cd /tmp/b-$n && patch -p1 -s < $OLDPWD/bench/tmp/$n.patch) || echo PATCH FAIL $n
(cd /tmp/b-$n && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-$n.log 2>&1 &
done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
wait
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
C=$PWD/bench/tmp/caches
for p in sure sk; do for d in bf16 fp8; do t0=$(date +%s)
timeout 100 python3 bench/env_sweep.py --caches $C --spec $PWD/bench/tmp/$p-$d.jsonl --rounds 2 --out $OUT/$p-$d --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant $p=BENCH=/tmp/b-$p/build/tools/jitgemm-bench -- --reps 50 > $OUT/$p-$d.log 2>&1; echo "$p $d rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/$p-$d.log
done; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
