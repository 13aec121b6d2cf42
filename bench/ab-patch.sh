#!/bin/sh
# A against B on one GPU host: the committed tree (A) and the same tree with
# a patch applied (B), each built apart, then jitgemm-bench on both in
# alternation, ROUNDS rounds, so that clock and temperature drift hit them
# alike. Prints each row's "ours" time (us) per tree and round, and B / A
# per row; JSON per run under $OUT (default ./bench/tmp/ab).
#
#   sh bench/ab-patch.sh PATCH [ROUNDS] -- JITGEMM-BENCH-ARGS... [-- ARGS...]
#   git diff > /tmp/change.patch
#   sh bench/ab-patch.sh /tmp/change.patch 2 -- \
#       --dtype fp8 --only decode_m16_7168x16384,decode_m64_7168x16384 --chain 16
#
# PATCH may instead be env:VAR=VALUE: then A is the working tree (not HEAD)
# and B is A's build run with VAR=VALUE in its environment (a rule's
# switch: env:JITGEMM_STREAM_K=0 gives the plans without the rule, so there
# B is the base and B / A > 1 means the rule is faster).
#
# Each further '--' starts another set of jitgemm-bench arguments (another
# dtype, say), run in every round on both trees; its rows are reported as
# "SET:row". Arguments are words without spaces. The patch must apply to
# HEAD (the working tree may hold it already). With --chain the time
# compared is the PDL chain's (the rows' ours_us). Needs meson, ninja,
# python3 and a GPU (git where the tree has its .git: then HEAD's files are
# compared, else the working tree's); the CUDA -dev packages as
# bench/run-device.sh installs. PACK=1: the run's files packed into
# $OUT/all.tgz at the end (bench/pack-out.sh).
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh bench/ab-patch.sh PATCH [ROUNDS] -- JITGEMM-BENCH-ARGS..." >&2
    exit 2
fi
patch=$1
shift
rounds=2
if [ "$1" != "--" ]; then
    rounds=$1
    shift
fi
if [ "${1:-}" != "--" ]; then
    echo "ab-patch.sh: '--' must come before jitgemm-bench's arguments" >&2
    exit 2
fi
shift
# The argument sets, split at each further '--': set_1 .. set_$nsets.
nsets=1
eval "set_1="
for w in "$@"; do
    case $w in
    *[[:space:]]*) echo "ab-patch.sh: argument '$w' holds a space" >&2; exit 2 ;;
    --) nsets=$((nsets + 1)); eval "set_$nsets=" ;;
    *) eval "set_$nsets=\"\${set_$nsets} \$w\"" ;;
    esac
done
case $rounds in
'' | *[!0-9]*) echo "ab-patch.sh: ROUNDS must be a number, not '$rounds'" >&2; exit 2 ;;
esac
b_env=
case $patch in
env:*=*) b_env=${patch#env:} ;;
*) [ -f "$patch" ] || { echo "ab-patch.sh: no patch file '$patch'" >&2; exit 2; } ;;
esac

OUT=${OUT:-bench/tmp/ab}
mkdir -p "$OUT"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# HEAD's files (git archive), or where the tree came without .git (a device
# run's copy) the working tree's, build outputs and bench/tmp left out
trees="a b"
[ -n "$b_env" ] && trees=a
for t in $trees; do
    mkdir -p "$work/$t"
    if [ -z "$b_env" ] && git rev-parse --verify -q HEAD > /dev/null 2>&1; then
        git archive HEAD | tar -x -C "$work/$t"
    else
        tar -cf - --exclude='./build*' --exclude=./bench/tmp --exclude=./.devdeps \
            --exclude=./bench/results . | tar -x -C "$work/$t"
    fi
done
case $patch in
/*) abs=$patch ;;
*) abs=$(pwd)/$patch ;;
esac
# applied to HEAD's copy: the working tree may hold the patch already
[ -n "$b_env" ] || (cd "$work/b" && git apply "$abs") ||
    { echo "ab-patch.sh: $patch does not apply to HEAD" >&2; exit 1; }
for t in $trees; do
    (cd "$work/$t" && meson setup build -Dbuildtype=release > "$work/$t.setup.log" 2>&1 &&
        ninja -C build tools/jitgemm-bench > "$work/$t.build.log" 2>&1) ||
        { echo "ab-patch.sh: tree $t does not build:" >&2; tail -20 "$work/$t.build.log" >&2; exit 1; }
done
r=1
while [ "$r" -le "$rounds" ]; do
    i=1
    while [ "$i" -le "$nsets" ]; do
        eval "args=\$set_$i"
        for t in a b; do
            run=$t-$i-$r
            dir=$t
            envs="JITGEMM_CACHE_DIR=$work/cache-$t"
            if [ -n "$b_env" ] && [ $t = b ]; then
                dir=a
                envs="$envs $b_env"
            fi
            # $args and $envs unquoted: split into their words (none holds a space)
            (cd "$work/$dir" && env $envs ./build/tools/jitgemm-bench \
                $args --json "$work/$run.json" > "$work/$run.log" 2>&1) ||
                { echo "ab-patch.sh: jitgemm-bench failed on tree $t:" >&2; tail -5 "$work/$run.log" >&2; }
            cp "$work/$run.json" "$OUT/" 2>/dev/null
        done
        i=$((i + 1))
    done
    r=$((r + 1))
done
python3 - "$work" "$rounds" "$nsets" <<'EOF'
import json, math, sys
work, rounds, nsets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {}
for t in "ab":
    for i in range(1, nsets + 1):
        for r in range(1, rounds + 1):
            try:
                rows = json.load(open(f"{work}/{t}-{i}-{r}.json"))["rows"]
            except (OSError, ValueError, KeyError):
                continue
            for row in rows:
                name = row["name"] if nsets == 1 else f"{i}:{row['name']}"
                runs.setdefault(name, {}).setdefault(t, []).append(row.get("ours_us"))
logs = []
print(f"{'row':32s} {'A (HEAD) us':>22s} {'B (patched) us':>22s} {'B / A':>7s}")
for name, v in runs.items():
    a = [x for x in v.get("a", []) if x]
    b = [x for x in v.get("b", []) if x]
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs) or "-"
    ratio = (sum(b) / len(b)) / (sum(a) / len(a)) if a and b else float("nan")
    if ratio == ratio:
        logs.append(math.log(ratio))
    print(f"{name:32s} {fmt(a):>22s} {fmt(b):>22s} {ratio:7.3f}")
if logs:
    print(f"geomean B / A over {len(logs)} rows: {math.exp(sum(logs) / len(logs)):.3f} (< 1: the patch is faster)")
EOF
st=$?
if [ "${PACK:-0}" = 1 ]; then sh bench/pack-out.sh "$OUT"; fi
exit $st
