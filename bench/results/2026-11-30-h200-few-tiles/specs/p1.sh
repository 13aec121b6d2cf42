set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built at $(el)s"; nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_COMMIT=$(cat bench/tmp/commit)
mkdir -p $OUT/fp8 $OUT/bf16
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/tmp/p1-fp8.jsonl --rounds 2 --out $OUT/fp8 \
  --variant base= --variant ns2=JITGEMM_N_STACK=2 --variant ns4=JITGEMM_N_STACK=4 --variant sw128=JITGEMM_SWAP=1,JITGEMM_TILE=128 \
  -- --reps 50 > $OUT/fp8.log 2>&1; echo "fp8 rc=$? at $(el)s"
i=0
while read m n k F S W; do
  [ $(el) -gt 520 ] && { echo "stop at row $i"; break; }
  i=$((i+1)); echo "{\"m\":$m,\"n\":$n,\"k\":$k}" > /tmp/row$i.jsonl
  timeout 60 python3 bench/env_sweep.py --spec /tmp/row$i.jsonl --rounds 2 --out $OUT/bf16/r$i \
    --variant base= --variant sk=JITGEMM_SWAP=1,JITGEMM_TILE=128x$F,JITGEMM_STREAM_K=$S \
    --variant ws=JITGEMM_SWAP=1,JITGEMM_TILE=128x$F,JITGEMM_SPLIT_WS=$W \
    -- --reps 50 > $OUT/bf16/r$i.log 2>&1; echo "row $i ${m}x${n}x${k} F=$F S=$S rc=$? at $(el)s"
done < bench/tmp/p1-rows.txt
sh bench/pack-out.sh $OUT
