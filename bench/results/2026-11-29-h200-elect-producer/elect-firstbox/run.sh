set -u
S1=2690582194; S2=3054352633; S3=2745977658
T0=$(date +%s)
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-ve && mkdir /tmp/b-ve && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-ve && (cd /tmp/b-ve && patch -p1 -s < bench/results/2026-11-29-h200-elect-producer/elect-firstbox.patch) || echo PATCH FAIL
t0=$(date +%s)
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-ve && meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-ve.log 2>&1 &
wait
echo "build $(( $(date +%s)-t0 ))s"
ls build/tools/jitgemm-bench /tmp/b-ve/build/tools/jitgemm-bench || { tail -20 $OUT/build-*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE_DIR=$(mktemp -d)
for v in base=build ve=/tmp/b-ve/build; do n=${v%%=*}; d=${v#*=}
timeout 60 $d/tools/jitgemm-bench --spec $PWD/bench/generic-decode.jsonl --pooled --no-peer --reps 100 --json $OUT/gd-$n.json > $OUT/gd-$n.log 2>&1; echo "gd $n rc=$?"; grep -E "^gd|M-generic" $OUT/gd-$n.log | cut -c1-100
done
for v in base=build ve=/tmp/b-ve/build; do n=${v%%=*}; d=${v#*=}
t0=$(date +%s)
timeout 105 $d/tools/jitgemm-bench --random 80 --seed $S1 --dtype bf16 --random-generic 0.25 --reps 20 --json $OUT/rb-$n.json > $OUT/rb-$n.log 2>&1; echo "bf16 $n rc=$? $(( $(date +%s)-t0 ))s"
grep -E "geomean|by M|M-generic" $OUT/rb-$n.log | head -4
done
for v in base=build ve=/tmp/b-ve/build; do n=${v%%=*}; d=${v#*=}
t0=$(date +%s)
timeout 105 $d/tools/jitgemm-bench --random 50 --seed $S2 --dtype fp8 --scale tensor --random-generic 0.25 --reps 20 --json $OUT/rf-$n.json > $OUT/rf-$n.log 2>&1; echo "fp8 $n rc=$? $(( $(date +%s)-t0 ))s"
grep -E "geomean|by M|M-generic" $OUT/rf-$n.log | head -4
done
cd /tmp/b-ve; echo "at $(( $(date +%s)-T0 ))s"
t0=$(date +%s); timeout 50 build/tests/test_gemm_fuzz --count 200 > $OUT/ve-gemm-fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/ve-gemm-fuzz.log
t0=$(date +%s); timeout 60 build/tests/test_any_fuzz --count 150 > $OUT/ve-any-fuzz.log 2>&1; echo "any_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/ve-any-fuzz.log
t0=$(date +%s); timeout 40 build/tests/test_grouped > $OUT/ve-grouped.log 2>&1; echo "grouped rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/ve-grouped.log
t0=$(date +%s); timeout 30 build/tests/test_pdl > $OUT/ve-pdl.log 2>&1; echo "pdl rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/ve-pdl.log
cd - > /dev/null
el=$(( $(date +%s)-T0 )); echo "at ${el}s"
if [ $el -lt 390 ]; then t0=$(date +%s)
JITGEMM_COMMIT=ve2 timeout 95 python3 bench/peer_torch.py --lib /tmp/b-ve/build/libjitgemm.so --random 60 --seed $S3 --dtype bf16 --reps 20 --json $OUT/torch-bf16-ve2.json > $OUT/torch-bf16-ve2.log 2>&1; echo "torch rc=$? $(( $(date +%s)-t0 ))s"; grep -iE "seed|geomean|10th" $OUT/torch-bf16-ve2.log | head -5
fi
sh bench/pack-out.sh $OUT
