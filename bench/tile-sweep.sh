#!/bin/sh
# Times the given shapes under several forced tiles (JITGEMM_TILE), ours only,
# to check the planner's choice against its neighbours.
#   sh bench/tile-sweep.sh "decode_m1_4096x7168,decode_m128_7168x2048" 64x32x128 64x64x128 ...
# An empty tile ("") is the planner's own choice.
set -u
shapes=$1
shift
for tile in "" "$@"; do
    echo "== JITGEMM_TILE=${tile:-planner}"
    JITGEMM_TILE=$tile ./build/tools/jitgemm-bench --no-peer --reps 50 --only "$shapes" 2>&1 |
        awk '/^(decode|square|prefill)/ {printf "%-26s %9s us  %5s SoL  %s\n", $1, $7, $12, $13}'
done
