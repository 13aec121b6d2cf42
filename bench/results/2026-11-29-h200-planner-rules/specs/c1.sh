set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
nvcc --version | tail -2
for p in pr:swap-pairs-overrule gb:generic-bucket nv:elect-nvfp4; do n=${p%%:*}; f=${p#*:}
  rm -rf /tmp/b-$n && mkdir /tmp/b-$n && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-$n && (cd /tmp/b-$n && patch -p1 -s < $OLDPWD/bench/patches/$f.patch) || echo PATCH FAIL $n
done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build-base.log 2>&1 &
for n in pr gb nv; do (cd /tmp/b-$n && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench tests/test_nvfp4 tests/test_grouped_nvfp4) > $OUT/build-$n.log 2>&1 & done
wait
echo "build at $(el)s"
ls build/tools/jitgemm-bench /tmp/b-pr/build/tools/jitgemm-bench /tmp/b-gb/build/tools/jitgemm-bench /tmp/b-nv/build/tools/jitgemm-bench >/dev/null || { tail -20 $OUT/build-*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
C=$PWD/bench/tmp/caches
# 1. generic-bucket: the 40 rows, two rounds in alternation
for r in 1 2; do for v in base=build gb=/tmp/b-gb/build; do n=${v%%=*}; d=${v#*=}
t0=$(date +%s); JITGEMM_CACHE_DIR=$C/$n timeout 80 $d/tools/jitgemm-bench --spec $PWD/bench/patches/generic-bucket-rows.jsonl --pooled --no-peer --reps 50 --json $OUT/gb-$n-$r.json > $OUT/gb-$n-$r.log 2>&1; echo "gb $n r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "M-generic|geomean" $OUT/gb-$n-$r.log | head -3 | cut -c1-150
done; done
echo "at $(el)s"
# 2. swap-pairs-overrule: changed rows, energy
for d in bf16 fp8; do t0=$(date +%s)
timeout 170 python3 bench/env_sweep.py --caches $C --spec $PWD/bench/tmp/pr-$d.jsonl --rounds 2 --out $OUT/pr-$d --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant pr=BENCH=/tmp/b-pr/build/tools/jitgemm-bench -- --energy --reps 20 > $OUT/pr-$d.log 2>&1; echo "pr $d rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pr-$d.log
done
echo "at $(el)s"
# 3. elect-nvfp4
if [ $(el) -lt 420 ]; then t0=$(date +%s)
OUT=$OUT/nv timeout 120 sh bench/ab-patch.sh bench/patches/elect-nvfp4.patch 2 -- --dtype nvfp4 --only decode_m1_7168x16384,decode_m1_4096x7168,decode_m1_7168x2048,decode_m16_7168x16384,decode_m16_4096x7168,decode_m64_7168x16384,decode_m128_7168x16384 > $OUT/nv.log 2>&1; echo "nv rc=$? $(( $(date +%s)-t0 ))s"; tail -12 $OUT/nv.log
fi
echo "at $(el)s"
if [ $(el) -lt 500 ]; then t0=$(date +%s)
timeout 70 build/tests/test_gemm_fuzz --count 250 > $OUT/fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/fuzz.log; fi
echo "at $(el)s"
sh bench/pack-out.sh $OUT
