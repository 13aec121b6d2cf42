set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
read S1 S2 < bench/tmp/seeds5.txt
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "build at $(el)s"; nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=$(mktemp -d) JITGEMM_COMMIT=243f73f
t0=$(date +%s); timeout 40 build/tools/jitgemm-bench --spec $PWD/bench/tmp/sure-bf16.jsonl --pooled --no-peer --reps 50 --json $OUT/check-sure.json > $OUT/check-sure.log 2>&1; echo "check rc=$? $(( $(date +%s)-t0 ))s"; grep -ciE "mismatch|FAIL" $OUT/check-sure.log; grep -E "check|plans" $OUT/check-sure.log | head -3
for c in "bf16 $S1 --dtype bf16" "fp8-tensor $S2 --dtype fp8 --scale tensor"; do set -- $c; n=$1; s=$2; shift 2
t0=$(date +%s)
timeout 45 python3 bench/peer_torch.py --random 200 --seed $s "$@" --reps 20 --json $OUT/torch-$n.json > $OUT/torch-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random|geomean|10th|M-generic|by M" $OUT/torch-$n.log | cut -c1-220 | head -6
done
echo "at $(el)s"
if [ $(el) -lt 150 ]; then t0=$(date +%s); timeout $(( 190 - $(el) )) build/tests/test_gemm_fuzz --count 200 > $OUT/fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/fuzz.log; fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
