set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build src/libjitgemm.so 2>/dev/null || ninja -C build) > $OUT/build.log 2>&1
ls build/libjitgemm.so > /dev/null || { tail -20 $OUT/build.log; exit 1; }
cp bench/tmp/peer_torch_noworkspace.py bench/peer_torch_noworkspace.py
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)
C=$(mktemp -d)
S=$(python3 -c "import random;print(random.randrange(1,2**32))")
for c in "bf16 bench/peer_torch.py --dtype bf16" "bf16-nows bench/peer_torch_noworkspace.py --dtype bf16" "fp8-tensor bench/peer_torch.py --dtype fp8 --scale tensor" "fp8-block bench/peer_torch.py --dtype fp8 --scale block"; do set -- $c; n=$1; py=$2; shift 2
if [ $(el) -lt 200 ]; then t0=$(date +%s)
seed=""; case $n in bf16*) seed="--seed $S";; esac
JITGEMM_CACHE_DIR=$C timeout 60 python3 $py --random 200 $seed "$@" --random-generic 0.25 --reps 20 --json $OUT/torch-$n.json > $OUT/torch-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random|geomean|M-generic|by M" $OUT/torch-$n.log | cut -c1-200 | head -5
fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
