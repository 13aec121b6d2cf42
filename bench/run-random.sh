#!/bin/sh
# The dense targets' run on a GPU host (issue 27): 200 random problems per
# class, drawn afresh (seeds printed and in the JSON), against cuBLASLt
# (jitgemm-bench) and against torch (peer_torch.py), then the row-pitch
# probe (bench/results/2026-11-27-h100-row-pitch/). Each class takes a few
# minutes on an H100; FP8 block scales the longest (cuBLASLt's heuristic).
# Logs and JSON to $OUT (default bench/tmp); PACK=1 packs them into
# $OUT/all.tgz at the end (bench/pack-out.sh: a device call returns 8 files).
#   sh bench/run-random.sh [bf16 fp8-tensor fp8-block ...]
set -u
OUT=${OUT:-bench/tmp}
mkdir -p "$OUT"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$OUT/gpu.txt"
export JITGEMM_COMMIT="${JITGEMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
[ -f build/build.ninja ] || meson setup build -Dbuildtype=release > "$OUT/build.log" 2>&1
ninja -C build >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
export JITGEMM_CACHE_DIR="${JITGEMM_CACHE_DIR:-$(mktemp -d)}"
B=build/tools/jitgemm-bench
classes=${*:-bf16 fp8-tensor fp8-block}
for c in $classes; do
    case $c in
    bf16) args="--dtype bf16" py="--dtype bf16" ;;
    fp8-tensor) args="--dtype fp8 --scale tensor" py="--dtype fp8 --scale tensor" ;;
    fp8-block) args="--dtype fp8 --scale block" py="--dtype fp8 --scale block" ;;
    *) echo "unknown class $c (bf16, fp8-tensor, fp8-block)"; exit 2 ;;
    esac
    # shellcheck disable=SC2086 # the options are words
    $B --random 200 $args --random-generic 0.25 --reps 50 --json "$OUT/random-$c.json" \
        > "$OUT/random-$c.log" 2>&1
    echo "jitgemm-bench --random 200 $args: rc=$?"
    grep -E "seed|geomean|by M|M-generic" "$OUT/random-$c.log"
    # shellcheck disable=SC2086
    python3 bench/peer_torch.py --random 200 $py \
        --json "$OUT/random-$c-torch.json" > "$OUT/random-$c-torch.log" 2>&1
    echo "peer_torch.py --random 200 $py: rc=$?"
    grep -iE "seed|geomean" "$OUT/random-$c-torch.log" | head -4
done
R=bench/results/2026-11-27-h100-row-pitch
for t in fp8 bf16; do
    $B --spec $R/kpitch-$t.jsonl --pooled --no-check --reps 50 --json "$OUT/kpitch-$t.json" \
        > "$OUT/kpitch-$t.log" 2>&1
    echo "row-pitch probe $t: rc=$?"
done
st=$?
if [ "${PACK:-0}" = 1 ]; then sh bench/pack-out.sh "$OUT"; fi
exit $st
