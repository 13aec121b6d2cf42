set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
mk() { # name patch targets...
  n=$1; p=$2; shift 2
  if [ ! -d /tmp/b-$n ]; then mkdir /tmp/b-$n && tar -cf - --exclude=./build --exclude=./.git --exclude=./.devdeps . | tar -x -C /tmp/b-$n && (cd /tmp/b-$n && { [ -z "$p" ] || patch -p1 -s < bench/patches/$p.patch; } && meson setup build -Dbuildtype=release > /dev/null); fi
  (cd /tmp/b-$n && ninja -C build "$@") > $OUT/build-$n.log 2>&1 || echo "BUILD FAIL $n"
}
mk base "" tools/jitgemm-bench &
mk gbh generic-box-at-hint tools/jitgemm-bench &
mk sns swap-n-stack tools/jitgemm-bench &
wait
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 170 python3 bench/env_sweep.py --spec $PWD/bench/tmp/gbh-rows.jsonl --rounds 2 --out $OUT/sw-gbh --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant gbh=BENCH=/tmp/b-gbh/build/tools/jitgemm-bench > $OUT/sweep-gbh.txt 2>&1; echo "gbh rc=$? $(( $(date +%s)-t0 ))s"
grep -h "M-generic " $OUT/sw-gbh/*.txt 2>/dev/null | head; tail -3 $OUT/sweep-gbh.txt
t0=$(date +%s)
timeout 220 python3 bench/env_sweep.py --spec $PWD/bench/tmp/sns-rows.jsonl --rounds 2 --peer --out $OUT/sw-sns --bench /tmp/b-sns/build/tools/jitgemm-bench --variant base= --variant swap=JITGEMM_SWAP=1,JITGEMM_SPLIT=1 --variant swapns2=JITGEMM_SWAP=1,JITGEMM_SPLIT=1,JITGEMM_N_STACK=2 -- --energy > $OUT/sweep-sns.txt 2>&1; echo "sns rc=$? $(( $(date +%s)-t0 ))s"
tail -6 $OUT/sweep-sns.txt
sh bench/pack-out.sh $OUT
