#!/bin/sh
# Several device jobs at once on a host of several GPUs, one GPU a lane:
#   OUT=$OUT sh bench/lanes.sh LANE0 LANE1 ...
# LANEi is a file of shell commands, one a line ('#' lines skipped), run in
# order with CUDA_VISIBLE_DEVICES=i, LANE=i and a cache folder of its own
# (JITGEMM_CACHE_DIR); each command's output goes to $OUT/laneI.log and
# its status and seconds to $OUT/lanes.txt ("[lI] rc=R Ns: COMMAND").
# Build first (ninja -C build) so that no two lanes build at once; give each
# command its own `timeout`. Commands may use $OUT and $LANE. Returns when
# every lane is done and prints lanes.txt. Timings of lanes that run at
# once share the host's CPUs and power: compare a lane's A with its own B.
set -u
OUT=${OUT:-bench/tmp}
mkdir -p "$OUT"
export OUT
i=0
for f in "$@"; do
    [ -f "$f" ] || { echo "lanes.sh: no lane file '$f'" >&2; exit 2; }
    (
        export CUDA_VISIBLE_DEVICES=$i LANE=$i
        JITGEMM_CACHE_DIR=$(mktemp -d)
        export JITGEMM_CACHE_DIR
        while IFS= read -r cmd; do
            case $cmd in '' | '#'*) continue ;; esac
            t0=$(date +%s)
            echo "== $cmd" >> "$OUT/lane$i.log"
            sh -c "$cmd" >> "$OUT/lane$i.log" 2>&1
            rc=$?
            echo "[l$i] rc=$rc $(($(date +%s) - t0))s: $cmd" >> "$OUT/lanes.txt"
        done < "$f"
    ) &
    i=$((i + 1))
done
wait
cat "$OUT/lanes.txt"
