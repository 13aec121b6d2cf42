set -u
t0=$(date +%s)
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/spc-rows.jsonl --rounds 2 --peer --out $OUT/sw-spc --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant spc=BENCH=/tmp/b-spc/build/tools/jitgemm-bench > $OUT/sweep-spc.txt 2>&1; echo "spc rc=$? $(( $(date +%s)-t0 ))s"
tail -8 $OUT/sweep-spc.txt
t0=$(date +%s)
timeout 150 python3 bench/env_sweep.py --spec $PWD/bench/tmp/gbh-rows.jsonl --rounds 2 --out $OUT/sw-gbh --variant base=BENCH=/tmp/b-base/build/tools/jitgemm-bench --variant gbh=BENCH=/tmp/b-gbh/build/tools/jitgemm-bench > $OUT/sweep-gbh.txt 2>&1; echo "gbh rc=$? $(( $(date +%s)-t0 ))s"
tail -5 $OUT/sweep-gbh.txt
sh bench/pack-out.sh $OUT
