set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
patch -p1 < bench/tmp/promo-lines.diff > /dev/null || exit 1
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)
# 1. the fixed rows (bench/shapes.jsonl), BF16 and FP8 tensor scales, against cuBLASLt
for d in "bf16 --dtype bf16" "fp8 --dtype fp8 --scale tensor"; do set -- $d; n=$1; shift; t0=$(date +%s)
JITGEMM_CACHE_DIR=$(mktemp -d) timeout 150 build/tools/jitgemm-bench "$@" --reps 100 --json $OUT/fixed-$n.json > $OUT/fixed-$n.log 2>&1; echo "fixed $n rc=$? $(( $(date +%s)-t0 ))s"; grep -E "geomean" $OUT/fixed-$n.log | cut -c1-160; done
# 2. FP8 rows off 128-byte lines (on sectors): 128-byte promotion too?
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/offlines-fp8.jsonl --rounds 2 --out $OUT/offlines --variant base= --variant p128=JITGEMM_TMA_PROMO_OFFLINE=1 -- --reps 50 > $OUT/offlines.log 2>&1; echo "offlines rc=$? at $(el)s"; tail -4 $OUT/offlines.log
echo "at $(el)s"
sh bench/pack-out.sh $OUT
