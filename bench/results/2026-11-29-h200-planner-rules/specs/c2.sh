set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
for p in pr:swap-pairs-overrule nv:elect-nvfp4; do n=${p%%:*}; f=${p#*:}
  rm -rf /tmp/b-$n && mkdir /tmp/b-$n && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-$n && (cd /tmp/b-$n && patch -p1 -s < $OLDPWD/bench/patches/$f.patch) || echo PATCH FAIL $n
done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-pr && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-pr.log 2>&1 &
(cd /tmp/b-nv && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tests/test_nvfp4 tests/test_grouped_nvfp4) > $OUT/build-nv.log 2>&1 &
wait
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
C=$PWD/bench/tmp/caches
t0=$(date +%s); timeout 60 python3 bench/tmp/prof.py bench/tmp/worst.txt > $OUT/prof.log 2>&1; echo "prof rc=$? $(( $(date +%s)-t0 ))s"; cut -c1-400 $OUT/prof.log
for d in bf16 fp8; do t0=$(date +%s)
timeout 150 python3 bench/env_sweep.py --caches $C --spec $PWD/bench/tmp/pr-$d.jsonl --rounds 2 --out $OUT/pr-$d --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant pr=BENCH=/tmp/b-pr/build/tools/jitgemm-bench -- --energy --reps 50 > $OUT/pr-$d.log 2>&1; echo "pr $d rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/pr-$d.log
done
echo "at $(el)s"
t0=$(date +%s)
timeout 120 python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst-bf16.jsonl --rounds 1 --out $OUT/sw-bf16 --variant base= --variant t128=JITGEMM_TILE=128x128 --variant t128w2=JITGEMM_TILE=128x128,JITGEMM_SPLIT_WS=2 --variant t256w2=JITGEMM_TILE=128x256,JITGEMM_SPLIT_WS=2 --variant t256w4=JITGEMM_TILE=128x256,JITGEMM_SPLIT_WS=4 --variant r256=JITGEMM_TILE=256 --variant c2=JITGEMM_CLUSTER=2 --variant sw=JITGEMM_SWAP=1 --variant s2=JITGEMM_SPLIT=2 -- --reps 30 > $OUT/sw-bf16.log 2>&1; echo "sw bf16 rc=$? $(( $(date +%s)-t0 ))s"
t0=$(date +%s)
timeout 100 python3 bench/env_sweep.py --spec $PWD/bench/tmp/worst-fp8.jsonl --rounds 1 --out $OUT/sw-fp8 --variant base= --variant t128=JITGEMM_TILE=128x128 --variant t128w2=JITGEMM_TILE=128x128,JITGEMM_SPLIT_WS=2 --variant t256w2=JITGEMM_TILE=128x256,JITGEMM_SPLIT_WS=2 --variant c2=JITGEMM_CLUSTER=2 --variant sw=JITGEMM_SWAP=1 --variant ns2=JITGEMM_N_STACK=2 --variant s2=JITGEMM_SPLIT=2 -- --reps 30 > $OUT/sw-fp8.log 2>&1; echo "sw fp8 rc=$? $(( $(date +%s)-t0 ))s"
echo "at $(el)s"
cd /tmp/b-nv
t0=$(date +%s); timeout 90 build/tests/test_nvfp4 > $OUT/nv-test_nvfp4.log 2>&1; echo "nv test_nvfp4 rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/nv-test_nvfp4.log
t0=$(date +%s); timeout 60 build/tests/test_grouped_nvfp4 > $OUT/nv-test_grouped_nvfp4.log 2>&1; echo "nv test_grouped_nvfp4 rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/nv-test_grouped_nvfp4.log
cd - >/dev/null
echo "at $(el)s"
if [ $(el) -lt 480 ]; then t0=$(date +%s)
timeout 80 build/tests/test_any_fuzz --count 150 > $OUT/any-fuzz.log 2>&1; echo "any_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/any-fuzz.log; fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
