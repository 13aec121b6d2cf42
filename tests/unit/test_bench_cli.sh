#!/bin/sh
# jitgemm-bench's command line and spec handling, which it does before it
# looks for a GPU: --help, bad option values (--chain's among them), and
# which spec lines become rows (nvfp4 lines and --dtype nvfp4; grouped ones
# skipped); --random's options and its draw (--emit-shapes: the printed
# seed draws the same problems, as does bench/peer_torch.py from that seed).
# Every run here stops before any GPU work: a usage error, --emit-shapes,
# or an --only naming a shape that is not in the spec (an error, exit status
# 2, reported after the spec is read, with the runnable names accepted
# silently).
#
#   test_bench_cli.sh path/to/jitgemm-bench
set -u
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tool=$bench
tool_name=jitgemm-bench
. "$(dirname "$0")/cli_checks.sh"

cat >"$tmp/spec.jsonl" <<'EOF'
{"name": "d16", "kind": "decode", "m": 16, "n": 256, "k": 512}
{"name": "d_nv", "kind": "decode", "m": 128, "n": 256, "k": 512, "dtype": "nvfp4"}
{"name": "g_nv", "kind": "grouped", "m": [64, 64], "n": [256, 256], "k": [512, 512], "dtype": "nvfp4"}
{"name": "g16", "kind": "grouped", "m": [64, 64], "n": [256, 256], "k": [512, 512]}
EOF

run --help
expect_rc 0 "--help"
expect "--dtype bf16|fp16|fp8|nvfp4" "--help"
expect "--sf-layout swizzled|rowmajor" "--help"
expect "4.5 bits per element" "--help"
expect "--chain N" "--help"
expect "Grouped rows ignore it" "--help"

run --dtype fp4 --spec "$tmp/spec.jsonl"
expect_rc 2 "--dtype fp4"
expect "--dtype must be bf16, fp16, fp8 or nvfp4, not 'fp4'" "--dtype fp4"

run --dtype nvfp4 --sf-layout colmajor --spec "$tmp/spec.jsonl"
expect_rc 2 "--sf-layout colmajor"
expect "--sf-layout must be swizzled or rowmajor, not 'colmajor'" "--sf-layout colmajor"

run --sf-layout --spec "$tmp/spec.jsonl"
expect_rc 2 "--sf-layout without a value"

run --flush never --spec "$tmp/spec.jsonl"
expect_rc 2 "--flush never"
expect "--flush must be read, memset or none, not 'never'" "--flush never"

# --flush none is accepted (the run stops at the unknown shape)
run --flush none --spec "$tmp/spec.jsonl" --only nosuch
expect_rc 2 "--flush none"
expect "no runnable shape 'nosuch'" "--flush none"
expect_not "--flush must be" "--flush none"

# --chain N: an integer in [2, 256] (2: the shortest chain), like --reps
# in [50, 100000]; both through one parser, with the same message.
for bad in 1 x 257 "" 8x; do
    run --chain "$bad" --spec "$tmp/spec.jsonl"
    expect_rc 2 "--chain '$bad'"
    expect "--chain must be an integer in \[2, 256\], not '$bad'" "--chain '$bad'"
done
run --spec "$tmp/spec.jsonl" --chain
expect_rc 2 "--chain without a value"
expect "--chain needs a value" "--chain without a value"
run --reps 3 --spec "$tmp/spec.jsonl"
expect_rc 2 "--reps 3"
expect "--reps must be an integer in \[50, 100000\], not '3'" "--reps 3"

# --chain 2 and 256 are accepted, with every dtype (the run stops at the
# unknown shape, before any GPU work)
for n in 2 256; do
    for dtype in bf16 fp8 nvfp4; do
        run --chain $n --dtype $dtype --spec "$tmp/spec.jsonl" --only d16,nosuch
        expect_rc 2 "--chain $n --dtype $dtype"
        expect "no runnable shape 'nosuch'" "--chain $n --dtype $dtype"
        expect_not "--chain must be" "--chain $n --dtype $dtype"
    done
done

# bf16 run: the nvfp4 line still runs (as nvfp4), its grouped line is
# skipped, the bf16 grouped line is a row.
run --spec "$tmp/spec.jsonl" --only d16,d_nv,g16,nosuch
expect_rc 2 "bf16 run"
expect "skipping g_nv: grouped in nvfp4 (the line's dtype): grouped NVFP4 is measured against \
its peer (torch._scaled_grouped_mm, FP8 row-wise) by bench/peer_torch.py --nvfp4" "bf16 run"
expect "no runnable shape 'nosuch'" "bf16 run"
expect_not "no runnable shape 'd_nv'" "bf16 run"
expect_not "no runnable shape 'g16'" "bf16 run"
expect_not "skipping d_nv" "bf16 run"

# --dtype nvfp4: dense and decode lines run as nvfp4, every grouped line is
# skipped (the bf16 one because of --dtype), in either layout.
for layout in swizzled rowmajor; do
    run --dtype nvfp4 --sf-layout $layout --spec "$tmp/spec.jsonl" --only d16,d_nv,nosuch
    expect_rc 2 "--dtype nvfp4 --sf-layout $layout"
    expect "skipping g16: grouped in nvfp4 (--dtype nvfp4)" "--dtype nvfp4 $layout"
    expect "skipping g_nv: grouped in nvfp4 (the line's dtype)" "--dtype nvfp4 $layout"
    expect "no runnable shape 'nosuch'" "--dtype nvfp4 $layout"
    expect_not "no runnable shape 'd16'" "--dtype nvfp4 $layout"
    expect_not "no runnable shape 'd_nv'" "--dtype nvfp4 $layout"
done

# --dtype fp8: grouped lines point to their torch peer
run --dtype fp8 --spec "$tmp/spec.jsonl" --only d16,g16
expect "skipping g16: grouped in fp8 (--dtype fp8): grouped FP8 is measured against its peer \
(torch._scaled_grouped_mm, row-wise) by bench/peer_torch.py --fp8" "--dtype fp8"
expect_not "no runnable shape 'd16'" "--dtype fp8"

run --dtype nvfp4 --spec "$tmp/spec.jsonl" --only g16
expect_rc 2 "--only a skipped grouped line"
expect "no runnable shape 'g16'" "--only a skipped grouped line"

# --random N: the draw and its options, checked before any GPU work (every
# run here either fails on an option or stops after --emit-shapes).
run --help
expect "--random N" "--help"
expect "--random-generic F" "--help"
expect "--emit-shapes FILE" "--help"
for bad in 0 -5 x 100001 ""; do
    run --random "$bad"
    expect_rc 2 "--random '$bad'"
    expect "--random must be an integer in \[1, 100000\], not '$bad'" "--random '$bad'"
done
for bad in -1 abc 0x10 9223372036854775808 18446744073709551616 ""; do
    run --random 3 --seed "$bad"
    expect_rc 2 "--seed '$bad'"
    expect "--seed must be an integer in \[0, 9223372036854775807\], not '$bad'" "--seed '$bad'"
done
for bad in 1.5 -0.1 x nan ""; do
    run --random 3 --random-generic "$bad"
    expect_rc 2 "--random-generic '$bad'"
    expect "--random-generic must be a number in \[0, 1\], not '$bad'" "--random-generic '$bad'"
done
for bad in third "" POW2; do
    run --random 3 --generic-buckets "$bad"
    expect_rc 2 "--generic-buckets '$bad'"
    expect "--generic-buckets must be pow2 or half, not '$bad'" "--generic-buckets '$bad'"
done
run --generic-buckets half --spec "$tmp/spec.jsonl"
expect_rc 2 "--generic-buckets without --random"
run --seed 3 --spec "$tmp/spec.jsonl"
expect_rc 2 "--seed without --random"
expect "go with --random N" "--seed without --random"
for extra in "--spec $tmp/spec.jsonl" "--only d16" "--chain 4"; do
    run --random 3 $extra
    expect_rc 2 "--random $extra"
    expect "--random draws its own problems" "--random $extra"
done
run --random 3 --dtype nvfp4
expect_rc 2 "--random --dtype nvfp4"
expect "not nvfp4" "--random --dtype nvfp4"
run --random 3 --reps 19
expect_rc 2 "--random --reps 19"
expect "--reps must be an integer in \[20, 100000\], not '19'" "--random --reps 19"
# --energy: single GEMMs, not chains
run --help
expect "--energy" "--help"
run --energy --chain 4 --spec "$tmp/spec.jsonl"
expect_rc 2 "--energy --chain"
expect "--energy times single GEMMs back to back" "--energy --chain"
# --family-ab: with --random or --pooled only (rows planned up front)
run --help
expect "--family-ab" "--help"
expect "JITGEMM_SWAP=0 JITGEMM_SPLIT=1" "--help"
for extra in "" "--spec $tmp/spec.jsonl" "--chain 4 --spec $tmp/spec.jsonl"; do
    # shellcheck disable=SC2086
    run --family-ab $extra
    expect_rc 2 "--family-ab $extra"
    expect "--family-ab goes with --random N or --pooled" "--family-ab $extra"
done
run --pooled --family-ab --spec "$tmp/spec.jsonl" --only d16,nosuch
expect_rc 2 "--pooled --family-ab"
expect "no runnable shape 'nosuch'" "--pooled --family-ab"
expect_not "--family-ab goes with" "--pooled --family-ab"
echo '{"models": {"X": {"hidden": 4100}}}' >"$tmp/dims.json"
run --random 3 --dims "$tmp/dims.json" --emit-shapes "$tmp/never.jsonl"
expect_rc 2 "--dims with a width not a multiple of 16"
expect "models.X.hidden = 4100: not a multiple of 16" "--dims with a bad width"

# The seed is printed first and draws the same problems again; another seed
# draws others; --reps 20 is enough for --random. (The default --dims is
# relative to the working directory, as --spec's is.)
dims=$(dirname "$0")/../../bench/model-dims.json
run --random 40 --seed 12345 --reps 20 --dims "$dims" --emit-shapes "$tmp/a.jsonl"
expect_rc 0 "--emit-shapes"
expect "40 problems, seed 12345 (--seed 12345 draws them again)" "--emit-shapes"
run --random 40 --seed 12345 --dims "$dims" --emit-shapes "$tmp/b.jsonl"
cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl" || fail "seed 12345 drew different problems twice"
# --family-ab changes nothing in the draw
run --random 40 --seed 12345 --family-ab --dims "$dims" --emit-shapes "$tmp/fab.jsonl"
expect_rc 0 "--random --family-ab --emit-shapes"
cmp -s "$tmp/a.jsonl" "$tmp/fab.jsonl" || fail "--family-ab drew other problems"
run --random 40 --seed 12346 --dims "$dims" --emit-shapes "$tmp/c.jsonl"
cmp -s "$tmp/a.jsonl" "$tmp/c.jsonl" && fail "seeds 12345 and 12346 drew the same problems"
[ "$(grep -c '"kind": "dense"' "$tmp/a.jsonl")" -eq 40 ] || fail "--emit-shapes: not 40 lines"
run --random 40 --dims "$dims" --emit-shapes "$tmp/fresh.jsonl"
seed=$(printf '%s\n' "$out" | sed -n 's/.*problems, seed \([0-9]*\) .*/\1/p')
if [ -z "$seed" ]; then
    fail "no seed printed without --seed"
else
    run --random 40 --seed "$seed" --dims "$dims" --emit-shapes "$tmp/again.jsonl"
    cmp -s "$tmp/fresh.jsonl" "$tmp/again.jsonl" || fail "the printed seed $seed drew others"
fi
# The drawn problems are spec lines: a fixed run reads them (and stops at
# the unknown name).
run --spec "$tmp/a.jsonl" --only r1,r40,nosuch
expect_rc 2 "--spec of drawn problems"
expect "no runnable shape 'nosuch'" "--spec of drawn problems"
expect_not "no runnable shape 'r1'" "--spec of drawn problems"
expect_not "line" "--spec of drawn problems"

# bench/peer_torch.py draws the same problems from the same seed (its own
# generator, bench/random_draw.py; no torch needed to draw).
peer=$(dirname "$0")/../../bench/peer_torch.py
if command -v python3 >/dev/null; then
    for args in "--seed 12345" "--seed 0 --random-generic 1" \
        "--seed 9223372036854775807 --random-generic 0.1" \
        "--seed 12345 --random-generic 0.5 --generic-buckets half"; do
        # shellcheck disable=SC2086
        python3 "$peer" --random 300 $args --dims "$dims" --emit-shapes "$tmp/py.jsonl" \
            >/dev/null 2>&1 ||
            fail "peer_torch.py --random 300 $args --emit-shapes failed"
        run --random 300 $args --dims "$dims" --emit-shapes "$tmp/c.jsonl"
        cmp -s "$tmp/py.jsonl" "$tmp/c.jsonl" ||
            fail "peer_torch.py and jitgemm-bench drew different problems ($args)"
    done
else
    echo "no python3: the draw of peer_torch.py is not compared"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
