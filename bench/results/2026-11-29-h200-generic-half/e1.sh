set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. cuBLAS on FP8 rows off 32-byte sectors: times, kernel names, instruction mix
python3 bench/tmp/fp8probe.py 4784 4800 4736 4768 > $OUT/probe.log 2>&1; cat $OUT/probe.log | cut -c1-300
timeout 90 ncu --clock-control none -k regex:nvjet --launch-skip 5 --launch-count 1 --section InstructionStats --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --print-details all python3 bench/tmp/fp8probe.py 4784 > $OUT/ncu-cublas-4784.txt 2>&1; echo "ncu cublas rc=$? at $(el)s"
timeout 90 ncu --clock-control none -k regex:nvjet --launch-skip 5 --launch-count 1 --section InstructionStats --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --print-details all python3 bench/tmp/fp8probe.py 4736 > $OUT/ncu-cublas-4736.txt 2>&1; echo "ncu cublas rc=$? at $(el)s"
printf '{"name":"off","kind":"dense","m":2048,"n":8192,"k":4784,"dtype":"fp8","scale":"tensor"}\n' > /tmp/off.jsonl
printf '{"name":"on","kind":"dense","m":2048,"n":8192,"k":4736,"dtype":"fp8","scale":"tensor"}\n' > /tmp/on.jsonl
for s in off on; do timeout 90 ncu --clock-control none -k regex:jg_gemm --launch-skip 3 --launch-count 1 --section InstructionStats --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --print-details all build/tools/jitgemm-bench --spec /tmp/$s.jsonl --no-peer --no-check --reps 5 > $OUT/ncu-ours-$s.txt 2>&1; echo "ncu ours $s rc=$? at $(el)s"; done
grep -hE "Duration|UTMALDG|LDGSTS|Memory Throughput|L2 Cache Throughput|==PROF==|Kernel|nvjet|jg_gemm" $OUT/ncu-*.txt | cut -c1-160 | head -60
# 2. M-generic plans, power-of-two hints against half buckets, the same rows (torch harness)
S=$(python3 -c "import random;print(random.randrange(1,2**32))")
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)
for b in pow2 half; do C=$(mktemp -d); t0=$(date +%s)
JITGEMM_CACHE_DIR=$C timeout 100 python3 bench/peer_torch.py --random 200 --seed $S --dtype bf16 --random-generic 0.5 --generic-buckets $b --reps 20 --json $OUT/gen-$b.json > $OUT/gen-$b.log 2>&1; echo "gen $b rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random|geomean|M-generic" $OUT/gen-$b.log | cut -c1-220 | head -6; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
