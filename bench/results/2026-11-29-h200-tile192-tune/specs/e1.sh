set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
for p in t192:tile-192 tune:tune-families; do n=${p%%:*}; f=${p#*:}
  rm -rf /tmp/b-$n && mkdir /tmp/b-$n && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps --exclude=./bench/tmp . | tar -x -C /tmp/b-$n && (cd /tmp/b-$n && patch -p1 -s < $OLDPWD/bench/patches/$f.patch) || echo PATCH FAIL $n
done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-t192 && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench tests/test_gemm_fuzz) > $OUT/build-t192.log 2>&1 &
(cd /tmp/b-tune && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-tune.log 2>&1 &
wait
echo "build at $(el)s"
ls build/tools/jitgemm-bench /tmp/b-t192/build/tools/jitgemm-bench /tmp/b-t192/build/tests/test_gemm_fuzz /tmp/b-tune/build/tools/jitgemm-bench > /dev/null || { tail -20 $OUT/build-*.log; exit 1; }
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. 192-row tiles: the fuzz (every 17th shape in the 192-row context), then sanitizers on some of those
t0=$(date +%s)
timeout 150 /tmp/b-t192/build/tests/test_gemm_fuzz --count 680 --seed 1129001 > $OUT/fuzz-t192.log 2>&1; echo "fuzz rc=$? $(( $(date +%s)-t0 ))s"; grep -E "seed|passed|failed|FAIL|margin" $OUT/fuzz-t192.log | head -12 | cut -c1-300
t0=$(date +%s)
for i in 8 25 42 59; do for tool in memcheck synccheck; do
timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/b-t192/build/tests/test_gemm_fuzz --count 680 --seed 1129001 --only $i > $OUT/san-$tool-$i.log 2>&1; echo "san $tool $i rc=$? $(grep -o 'ERROR SUMMARY.*' $OUT/san-$tool-$i.log | head -1) $(grep -o 'context [a-z0-9-]* kernel [a-z0-9_]*' $OUT/san-$tool-$i.log | head -1)"
done; done; echo "san $(( $(date +%s)-t0 ))s"
echo "at $(el)s"
# 2. 192-row tiles against the planner on rows with M 129-400
t0=$(date +%s)
timeout 150 python3 bench/env_sweep.py --caches $PWD/bench/tmp/caches-t192 --spec $PWD/bench/patches/tile-192-rows.jsonl --rounds 2 --out $OUT/t192 --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant t192=BENCH=/tmp/b-t192/build/tools/jitgemm-bench,JITGEMM_TILE=192 --variant t192c2=BENCH=/tmp/b-t192/build/tools/jitgemm-bench,JITGEMM_TILE=192,JITGEMM_CLUSTER=2 -- --reps 50 > $OUT/t192.log 2>&1; echo "t192 rc=$? $(( $(date +%s)-t0 ))s"; tail -6 $OUT/t192.log
echo "at $(el)s"
# 3. tuning across families on the worst rows
R=$PWD/bench/results/2026-11-29-h200-planner-rules/specs
for d in bf16 fp8; do
if [ $(el) -lt 480 ]; then t0=$(date +%s)
timeout 100 python3 bench/env_sweep.py --caches $PWD/bench/tmp/caches-tune --spec $R/worst-$d.jsonl --rounds 2 --out $OUT/tune-$d --variant base=BENCH=$PWD/build/tools/jitgemm-bench --variant tune=BENCH=$PWD/build/tools/jitgemm-bench,JITGEMM_TUNE=1 --variant tunefam=BENCH=/tmp/b-tune/build/tools/jitgemm-bench,JITGEMM_TUNE=1 -- --reps 50 > $OUT/tune-$d.log 2>&1; echo "tune $d rc=$? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/tune-$d.log
fi; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
