set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-m192 && mkdir /tmp/b-m192 && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-m192 && (cd /tmp/b-m192 && patch -p1 -s < $OLDPWD/bench/tmp/m192.patch) || echo PATCH FAIL
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-m192 && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-m192.log 2>&1 &
wait
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. 192-row tiles as the model's candidates: rows whose tile they change
t0=$(date +%s)
timeout 200 python3 bench/env_sweep.py --caches $PWD/bench/tmp/caches-m192 --spec $PWD/bench/tmp/m192-rows.jsonl --rounds 2 --out $OUT/m192 --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant m192=BENCH=/tmp/b-m192/build/tools/jitgemm-bench -- --reps 50 > $OUT/m192.log 2>&1; echo "m192 rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/m192.log
echo "at $(el)s"
# 2. cuBLASLt over 200 random rows at the head (and BF16 with the candidates)
export JITGEMM_COMMIT=$(cat bench/tmp/commit.txt)
for v in bf16:base fp8:base bf16:m192; do d=${v%%:*}; n=${v#*:}
if [ $(el) -lt 420 ]; then t0=$(date +%s)
B=$PWD/build/tools/jitgemm-bench; [ $n = m192 ] && B=/tmp/b-m192/build/tools/jitgemm-bench
sc=""; [ $d = fp8 ] && sc="--scale tensor"
JITGEMM_CACHE_DIR=$PWD/bench/tmp/caches-rand-$n timeout 170 $B --random 200 --seed 112901 --dtype $d $sc --random-generic 0.25 --reps 20 --json $OUT/random-$d-$n.json > $OUT/random-$d-$n.log 2>&1; echo "random $d $n rc=$? $(( $(date +%s)-t0 ))s"
grep -E "seed|geomean|by M|M-generic|plans " $OUT/random-$d-$n.log | cut -c1-250
fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
