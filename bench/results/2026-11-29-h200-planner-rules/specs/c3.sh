set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
read S1 S2 S3 < bench/tmp/seeds3.txt
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-mg && mkdir /tmp/b-mg && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-mg && (cd /tmp/b-mg && patch -p1 -s < $OLDPWD/bench/tmp/margin.patch) || echo PATCH FAIL
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-mg && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-mg.log 2>&1 &
wait
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
C=$PWD/bench/tmp/caches
# 1. torch at the merged head (pr + nv), prewarmed cache
export JITGEMM_COMMIT=merged-pr-nv
for c in "bf16 $S1 --dtype bf16" "fp8-tensor $S2 --dtype fp8 --scale tensor" "fp8-block $S3 --dtype fp8 --scale block"; do set -- $c; n=$1; s=$2; shift 2
t0=$(date +%s)
JITGEMM_CACHE_DIR=$C/torch timeout 60 python3 bench/peer_torch.py --random 200 --seed $s "$@" --reps 20 --json $OUT/torch-$n.json > $OUT/torch-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"
grep -iE "^random|geomean|10th|M-generic|by M|plans" $OUT/torch-$n.log | cut -c1-220 | head -8
done
unset JITGEMM_COMMIT
echo "at $(el)s"
# 2. margin A/B (cell's swap/split kept where the model rates it within 1.10)
for d in bf16 fp8; do t0=$(date +%s)
timeout 110 python3 bench/env_sweep.py --caches $C --spec $PWD/bench/tmp/mg-$d.jsonl --rounds 2 --out $OUT/mg-$d --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant mg=BENCH=/tmp/b-mg/build/tools/jitgemm-bench -- --reps 50 > $OUT/mg-$d.log 2>&1; echo "mg $d rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/mg-$d.log
done
echo "at $(el)s"
# 3. forced variants on the worst rows
if [ $(el) -lt 420 ]; then t0=$(date +%s)
timeout 90 python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst-bf16.jsonl --rounds 1 --out $OUT/sw-bf16 --variant base= --variant t64=JITGEMM_TILE=64x0x0 --variant t64c2=JITGEMM_TILE=64x0x0,JITGEMM_CLUSTER=2 --variant t128w2=JITGEMM_TILE=128x128,JITGEMM_SPLIT_WS=2 --variant c2=JITGEMM_CLUSTER=2 --variant ns2=JITGEMM_N_STACK=2 --variant sw=JITGEMM_SWAP=1 --variant sws=JITGEMM_SWAP=1,JITGEMM_SPLIT=any --variant s2=JITGEMM_SPLIT=2 -- --reps 50 > $OUT/sw-bf16.log 2>&1; echo "sw bf16 rc=$? $(( $(date +%s)-t0 ))s"; tail -14 $OUT/sw-bf16.log
fi
if [ $(el) -lt 500 ]; then t0=$(date +%s)
timeout 80 python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst-fp8.jsonl --rounds 1 --out $OUT/sw-fp8 --variant base= --variant t64=JITGEMM_TILE=64x0x0 --variant t128w2=JITGEMM_TILE=128x128,JITGEMM_SPLIT_WS=2 --variant c2=JITGEMM_CLUSTER=2 --variant ns2=JITGEMM_N_STACK=2 --variant sw=JITGEMM_SWAP=1 --variant sws=JITGEMM_SWAP=1,JITGEMM_SPLIT=any --variant s2=JITGEMM_SPLIT=2 -- --reps 50 > $OUT/sw-fp8.log 2>&1; echo "sw fp8 rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/sw-fp8.log
fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
