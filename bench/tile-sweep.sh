#!/bin/sh
# Times the given shapes under several forced tiles (JITGEMM_TILE), ours only,
# to check the planner's choice against its neighbours.
#   sh bench/tile-sweep.sh "decode_m1_4096x7168,decode_m128_7168x2048" 64x32x128 64x64x128 ...
# An empty tile ("") is the planner's own choice. Any row of bench/shapes.jsonl
# may be named: dense (square*, prefill_*), decode_* and grouped (seed_group*,
# moe_*).
set -u
shapes=$1
shift
for tile in "" "$@"; do
    echo "== JITGEMM_TILE=${tile:-planner}"
    JITGEMM_TILE=$tile ./build/tools/jitgemm-bench --no-peer --reps 50 --only "$shapes" 2>&1 |
        awk '
        # A table row, whatever its name: field 6 says where the kernel came
        # from (nvrtc or disk); a row that could not be planned has ERROR in
        # field 5. Fields: 1 name, 7 ours us, 12 SoL,
        # 13 MHz (with a p when power-capped), the peer column (one or two
        # words) and the kernel (jg_...), then any MISMATCH/ERROR.
        $5 == "ERROR" {
            name = $1
            for (k = 0; k < 4; ++k)
                sub(/^[^ ]+ +/, "")
            printf "%-26s %s\n", name, $0
            next
        }
        $6 ~ /^(nvrtc|disk)$/ {
            for (i = 13; i <= NF && $i !~ /^jg_/; ++i)
                ;
            tail = ""
            for (j = i + 1; j <= NF; ++j)
                tail = tail " " $j
            printf "%-26s %9s us  %5s SoL  %s%s\n", $1, $7, $12, i <= NF ? $i : "-", tail
        }'
done
