set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/old
cp bench/tmp/plan_sm90-old.c /tmp/old/src/codegen/plan_sm90.c
(meson setup build -Dbuildtype=release && ninja -C build tools/jitgemm-bench) > $OUT/build.log 2>&1 &
(cd /tmp/old && meson setup build -Dbuildtype=release && ninja -C build tools/jitgemm-bench) > $OUT/build-old.log 2>&1 &
wait
tail -n 1 $OUT/build.log $OUT/build-old.log
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 100 python3 bench/env_sweep.py --spec $PWD/bench/tmp/pad-bf16.jsonl --rounds 2 --peer --out $OUT/sw-pad-bf16 --variant old=BENCH=/tmp/old/build/tools/jitgemm-bench --variant new= > $OUT/sweep-pad-bf16.txt 2>&1
tail -n 4 $OUT/sweep-pad-bf16.txt
timeout 70 python3 bench/env_sweep.py --spec $PWD/bench/tmp/pad-fp8.jsonl --rounds 2 --peer --out $OUT/sw-pad-fp8 --variant old=BENCH=/tmp/old/build/tools/jitgemm-bench --variant new= > $OUT/sweep-pad-fp8.txt 2>&1
tail -n 4 $OUT/sweep-pad-fp8.txt
sh bench/pack-out.sh $OUT && mv $OUT/all.tgz $OUT/ab.tgz
timeout 170 build/tools/jitgemm-bench --random 140 --dtype bf16 --random-generic 0.25 --reps 20 --json $OUT/random-bf16.json > $OUT/random-bf16.log 2>&1; echo "random rc=$?"
grep -E "seed|geomean|by M|M-generic|p10" $OUT/random-bf16.log | head -12
ls $OUT
