set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 200 sh bench/ncu-pair.sh $PWD/bench/tmp/ncu-bf16.jsonl $OUT/ncu-bf16 > $OUT/ncu-bf16.log 2>&1; echo "ncu bf16 rc=$? at $(el)s"; cat $OUT/ncu-bf16/compare.txt
timeout 130 sh bench/ncu-pair.sh $PWD/bench/tmp/ncu-fp8.jsonl $OUT/ncu-fp8 > $OUT/ncu-fp8.log 2>&1; echo "ncu fp8 rc=$? at $(el)s"; cat $OUT/ncu-fp8/compare.txt
S=$(od -An -tu4 -N4 /dev/urandom | tr -d ' '); echo "tune seed $S"
JITGEMM_LOG=plan JITGEMM_CACHE_DIR=/tmp/tc timeout $((570-$(el))) build/tools/jitgemm-bench --random 10 --seed $S --tune --reps 50 --json $OUT/tune.json > $OUT/tune.out 2> $OUT/tune.log; echo "tune rc=$? at $(el)s"; tail -25 $OUT/tune.out; grep -ci cand $OUT/tune.log
sh bench/pack-out.sh $OUT
