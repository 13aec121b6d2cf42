set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit)
(OUT=$OUT DEADLINE=380 sh bench/run-gpu-suite.sh > $OUT/suite.log 2>&1; echo "suite rc=$? at $(el)s" >> $OUT/suite.log) &
SUITE=$!
wait $SUITE
tail -25 $OUT/suite.log
export JITGEMM_CACHE_DIR=/tmp/c-draw
mkdir -p $OUT/draw
timeout $((480-$(el))) python3 bench/peer_torch.py --random 200 --dtype bf16 --json $OUT/draw/torch-bf16.json > $OUT/draw/torch-bf16.log 2>&1; echo "bf16 rc=$? at $(el)s"; grep -A3 "random summary" $OUT/draw/torch-bf16.log | head -4
timeout $((545-$(el))) python3 bench/peer_torch.py --random 200 --dtype fp8 --scale tensor --json $OUT/draw/torch-fp8-tensor.json > $OUT/draw/torch-fp8-tensor.log 2>&1; echo "fp8 rc=$? at $(el)s"; grep -A3 "random summary" $OUT/draw/torch-fp8-tensor.log | head -4
for d in bf16 fp8; do timeout $((585-$(el))) build/tools/jitgemm-bench --spec $PWD/bench/tmp/guard-$d.jsonl --reps 20 --no-peer --json $OUT/draw/check-$d.json > $OUT/draw/check-$d.log 2>&1; echo "check $d rc=$? at $(el)s"; grep -ciE "mismatch|fail" $OUT/draw/check-$d.log; done
sh bench/pack-out.sh $OUT
