set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/b-we; mkdir -p /tmp/b-we && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-we
(cd /tmp/b-we && patch -p1 < bench/tmp/we.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-we.log 2>&1 || { tail -30 $OUT/build-we.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 100 build/tests/test_offline_plans --dims bench/model-dims.json > $OUT/offline-plans.log 2>&1; echo "offline_plans rc=$? at $(el)s"; tail -3 $OUT/offline-plans.log
WE=BENCH=/tmp/b-we/build/tools/jitgemm-bench
for d in bf16 fp8; do t0=$(date +%s)
timeout 170 python3 bench/env_sweep.py --spec $PWD/bench/tmp/we-$d.jsonl --rounds 2 --peer --out $OUT/we-$d --variant base= --variant w48=$WE,JITGEMM_WIDTH_EFF=48 --variant w64=$WE,JITGEMM_WIDTH_EFF=64 -- --reps 50 > $OUT/we-$d.log 2>&1; echo "we $d rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/we-$d.log
done
echo "at $(el)s"
for d in bf16 fp8; do t0=$(date +%s); [ $(el) -gt 380 ] && { echo skip or $d; continue; }
timeout $((560-$(el))) python3 bench/env_sweep.py --spec $PWD/bench/tmp/or-$d.jsonl --rounds 1 --peer --out $OUT/or-$d --variant base= --variant plain=JITGEMM_SWAP=0,JITGEMM_SPLIT=1 --variant swap=JITGEMM_SWAP=1,JITGEMM_SPLIT=1 --variant split=JITGEMM_SWAP=0,JITGEMM_SPLIT=any --variant swsp=JITGEMM_SWAP=1,JITGEMM_SPLIT=any --variant w64=$WE,JITGEMM_WIDTH_EFF=64 -- --reps 50 --dtype $d > $OUT/or-$d.log 2>&1; echo "or $d rc=$? $(( $(date +%s)-t0 ))s"; tail -10 $OUT/or-$d.log
done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
