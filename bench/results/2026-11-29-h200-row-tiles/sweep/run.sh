set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. forced families on the weak class (M 65-200, N <= 3072, K >= 8192) and the draw's worst rows
t0=$(date +%s)
timeout 330 python3 bench/env_sweep.py --spec $PWD/bench/tmp/cls.jsonl --rounds 2 --peer --out $OUT/cls --variant base= --variant swap1=JITGEMM_SWAP=1 --variant swap0=JITGEMM_SWAP=0 --variant split8=JITGEMM_SPLIT=8 --variant split1=JITGEMM_SPLIT=1 --variant ws8=JITGEMM_SPLIT_WS=8 --variant tune=JITGEMM_TUNE=1 -- --reps 50 > $OUT/cls.log 2>&1; echo "cls rc=$? $(( $(date +%s)-t0 ))s"; tail -36 $OUT/cls.log
echo "at $(el)s"
# 2. correctness of the M-generic boxes: gemm_fuzz (half its hints in the package's buckets), the Python tests
t0=$(date +%s); JITGEMM_CACHE=off timeout 200 build/tests/test_gemm_fuzz > $OUT/gemm-fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/gemm-fuzz.log
if [ $(el) -lt 470 ]; then t0=$(date +%s)
JITGEMM_CACHE_DIR=$(mktemp -d) JITGEMM_LIBRARY="$PWD/build/libjitgemm.so" PYTHONPATH="$PWD/python" timeout 150 python3 -m pytest tests/python -rs -p no:cacheprovider > $OUT/pytest.log 2>&1; echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/pytest.log; fi
# 3. BF16 against torch, M-generic half of the rows (fresh seed)
if [ $(el) -lt 520 ]; then t0=$(date +%s)
JITGEMM_CACHE_DIR=$(mktemp -d) timeout 75 python3 bench/peer_torch.py --random 200 --random-generic 0.5 --dtype bf16 --reps 20 --json $OUT/torch-bf16-gen.json > $OUT/torch-bf16-gen.log 2>&1; echo "torch bf16 rc=$? $(( $(date +%s)-t0 ))s"; grep -iE "seed|geomean|generic" $OUT/torch-bf16-gen.log | cut -c1-220 | head -6; fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
