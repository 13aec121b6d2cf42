set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
rm -rf /tmp/b-pf8 && mkdir /tmp/b-pf8 && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-pf8 && (cd /tmp/b-pf8 && patch -p1 -s < bench/patches/swap-pairs-fp8.patch) || echo PATCH FAIL
t0=$(date +%s)
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 &
(cd /tmp/b-pf8 && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tests/test_fp8) > $OUT/build-pf8.log 2>&1 &
rm -rf /tmp/b-gv && mkdir /tmp/b-gv && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-gv && (cd /tmp/b-gv && patch -p1 -s < (the patch: #pragma unroll 1 on the runtime box loop)) || echo PATCH FAIL
(cd /tmp/b-gv && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-gv.log 2>&1 &
wait
echo "build $(( $(date +%s)-t0 ))s"
export JITGEMM_CACHE_DIR=$(mktemp -d)
B=build/tools/jitgemm-bench
$B --spec $PWD/(the gd1 line of bench/generic-decode.jsonl) --pooled --no-peer --reps 50 > $OUT/gd1-warm.log 2>&1; tail -3 $OUT/gd1-warm.log
t0=$(date +%s)
for v in "baked m1n2880" "generic mX8n2880"; do set -- $v
timeout 120 ncu --kernel-name regex:$2 --launch-skip 5 --launch-count 1 --set full --import-source no -o /tmp/gd1-$1 $B --spec $PWD/(the gd1 line of bench/generic-decode.jsonl) --pooled --no-peer --no-check --reps 50 > $OUT/ncu-$1.log 2>&1; echo "ncu $1 rc=$?"

ncu -i /tmp/gd1-$1.ncu-rep --page source --csv --print-source sass > $OUT/src-$1.csv 2> $OUT/src-$1.err
ncu -i /tmp/gd1-$1.ncu-rep --page details --csv > $OUT/det-$1.csv 2>> $OUT/src-$1.err
done
echo "ncu $(( $(date +%s)-t0 ))s"
for r in 1 2; do for v in base=build gv=/tmp/b-gv/build; do n=${v%%=*}; d=${v#*=}
timeout 60 $d/tools/jitgemm-bench --spec $PWD/bench/generic-decode.jsonl --pooled --no-peer --reps 100 --json $OUT/gd-$n-$r.json > $OUT/gd-$n-$r.log 2>&1; echo "gd $n $r rc=$?"; grep -E "^ *gd|generic" $OUT/gd-$n-$r.log | head -8
done; done
t0=$(date +%s)
(cd /tmp/b-pf8 && timeout 260 build/tests/test_fp8) > $OUT/fp8-pf8.log 2>&1; echo "test_fp8 rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/fp8-pf8.log
sh bench/pack-out.sh $OUT
