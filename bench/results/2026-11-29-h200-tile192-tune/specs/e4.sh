set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. the gpu suite's tests of 16-bit dense and grouped kernels (192-row tiles in the planner)
meson test -C build --suite gpu --num-processes 1 gemm_basic gemm_fuzz grouped pdl run_in_context many_kernels > $OUT/gpu-suite.log 2>&1; echo "gpu suite (part) rc=$? at $(el)s"
grep -E "^ *[0-9]+/[0-9]+ " $OUT/gpu-suite.log; cp build/meson-logs/testlog.txt $OUT/testlog.txt
grep -hE "seed|shapes, " build/meson-logs/testlog.txt | head -6 | cut -c1-200
# 2. forced variants on the worst rows of the torch draws
for d in bf16 fp8; do
if [ $(el) -lt 420 ]; then t0=$(date +%s)
timeout 120 python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst2-$d.jsonl --rounds 1 --out $OUT/sw-$d --variant base= --variant sw=JITGEMM_SWAP=1 --variant sws=JITGEMM_SWAP=1,JITGEMM_SPLIT=any --variant s8=JITGEMM_SPLIT=8 --variant ws4=JITGEMM_SPLIT_WS=4 --variant t192=JITGEMM_TILE=192 --variant t64=JITGEMM_TILE=64x0x0 --variant c2=JITGEMM_CLUSTER=2 -- --reps 50 > $OUT/sw-$d.log 2>&1; echo "sw $d rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/sw-$d.log
fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
