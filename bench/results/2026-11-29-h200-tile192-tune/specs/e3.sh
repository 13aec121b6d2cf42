set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-base && mkdir /tmp/b-base && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-base && (cd /tmp/b-base && patch -R -p1 -s < $OLDPWD/bench/tmp/m192-final.patch) || echo PATCH FAIL
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 &
(cd /tmp/b-base && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
wait
echo "build at $(el)s"
ls build/tools/jitgemm-bench /tmp/b-base/build/tools/jitgemm-bench build/tests/test_any_fuzz >/dev/null || { tail -30 $OUT/build*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. A/B: the test rows of the rules the candidates displace, fresh BF16 and FP16 rows they change
t0=$(date +%s)
timeout 200 python3 bench/env_sweep.py --caches $PWD/bench/tmp/caches-m192b --spec $PWD/bench/tmp/m192b-rows.jsonl --rounds 2 --out $OUT/m192b --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant m192=BENCH=$PWD/build/tools/jitgemm-bench -- --reps 50 > $OUT/m192b.log 2>&1; echo "m192b rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/m192b.log
echo "at $(el)s"
# 2. GPU tests of the dense kernels with the candidates in the planner
export JITGEMM_CACHE=off
for t in "gemm_fuzz --count 400" "any_fuzz --count 150" "gemm_basic"; do set -- $t; n=$1; shift; t0=$(date +%s)
timeout 150 build/tests/test_$n "$@" > $OUT/test-$n.log 2>&1; echo "test_$n rc=$? $(( $(date +%s)-t0 ))s"; grep -iE "seed|passed|failed|FAIL" $OUT/test-$n.log | tail -4 | cut -c1-250
done
unset JITGEMM_CACHE
echo "at $(el)s"
# 3. torch over 200 fresh random rows per class, this tree
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)
C=$(mktemp -d)
for c in "bf16 --dtype bf16" "fp8-tensor --dtype fp8 --scale tensor" "fp8-block --dtype fp8 --scale block"; do set -- $c; n=$1; shift
if [ $(el) -lt 500 ]; then t0=$(date +%s)
JITGEMM_CACHE_DIR=$C timeout 70 python3 bench/peer_torch.py --random 200 "$@" --random-generic 0.25 --reps 20 --json $OUT/torch-$n.json > $OUT/torch-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random|seed|geomean|10th|M-generic|by M" $OUT/torch-$n.log | cut -c1-220 | head -8
fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
