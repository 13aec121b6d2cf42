set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
# the tree before: this tree less the library's change (bench/tmp/new-src.diff)
mkdir -p /tmp/b-base && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-base
(cd /tmp/b-base && patch -R -p1 < bench/tmp/new-src.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)+promotion
R() { python3 -c "import random;print(random.randrange(1,2**32))"; }
# 1. FP8 against torch, the same seed through the tree before and this one
for c in "tensor" "block"; do S=$(R)
for v in base new; do L=build/libjitgemm.so; [ $v = base ] && L=/tmp/b-base/build/libjitgemm.so
t0=$(date +%s); JITGEMM_CACHE_DIR=$(mktemp -d) timeout 90 python3 bench/peer_torch.py --lib $L --random 200 --seed $S --dtype fp8 --scale $c --reps 20 --json $OUT/torch-fp8-$c-$v.json > $OUT/torch-fp8-$c-$v.log 2>&1; echo "fp8 $c $v rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "geomean" $OUT/torch-fp8-$c-$v.log | cut -c1-200 | head -3; done; done
# 2. BF16 against torch (fresh seed), M-generic rows in half buckets
t0=$(date +%s); JITGEMM_CACHE_DIR=$(mktemp -d) timeout 90 python3 bench/peer_torch.py --random 200 --dtype bf16 --reps 20 --json $OUT/torch-bf16.json > $OUT/torch-bf16.log 2>&1; echo "bf16 rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random:|geomean" $OUT/torch-bf16.log | cut -c1-200 | head -4
# 3. against cuBLASLt, fresh seeds
for c in "bf16 --dtype bf16" "fp8-tensor --dtype fp8 --scale tensor"; do set -- $c; n=$1; shift
if [ $(el) -lt 400 ]; then t0=$(date +%s)
JITGEMM_CACHE_DIR=$(mktemp -d) timeout 170 build/tools/jitgemm-bench --random 200 "$@" --random-generic 0.25 --reps 20 --json $OUT/random-$n.json > $OUT/random-$n.log 2>&1; echo "cublaslt $n rc=$? $(( $(date +%s)-t0 ))s"
grep -E "seed|geomean|M-generic" $OUT/random-$n.log | cut -c1-200 | head -5; fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
