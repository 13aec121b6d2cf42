set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-pairs && mkdir /tmp/b-pairs && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-pairs && (cd /tmp/b-pairs && git apply bench/tmp/pairs.diff 2>/dev/null || patch -p1 -s < bench/tmp/pairs.diff) || echo PATCH FAIL
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-pairs && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-pairs.log 2>&1 &
wait
ls build/tools/jitgemm-bench /tmp/b-pairs/build/tools/jitgemm-bench || { tail -20 $OUT/build-*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 240 python3 bench/env_sweep.py --spec $PWD/bench/tmp/pairs2-rows.jsonl --rounds 2 --out $OUT/sw-pairs --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant pairs=BENCH=/tmp/b-pairs/build/tools/jitgemm-bench -- --energy > $OUT/sweep-pairs.txt 2>&1; echo "pairs rc=$? $(( $(date +%s)-t0 ))s"
tail -5 $OUT/sweep-pairs.txt
t0=$(date +%s)
sh bench/pack-out.sh $OUT
