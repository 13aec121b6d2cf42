#!/bin/sh
# jitgemm-warm end to end, offline (--arch sm_90a: no GPU needed), into a
# temporary cache: two kernels compiled, then found cached; malformed and
# unsupported lines; --dry-run, --m-generic and --pdl counting; stdin;
# --backend (each backend its own entries; llvm refused in a build without
# it); --list; a damaged entry caught by --verify and removed by --prune;
# pruning by age and size; a directory the library refuses.
#
#   test_warm.sh path/to/jitgemm-warm
set -u
warm=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache=$tmp/cache
export JITGEMM_CACHE_DIR="$tmp/env-cache" # never the user's own cache
unset JITGEMM_LOG JITGEMM_TILE JITGEMM_DUMP JITGEMM_BACKEND
tool=$warm
tool_name=jitgemm-warm
. "$(dirname "$0")/cli_checks.sh"
entries() { ls "$cache"/sm_90a/*.cubin 2>/dev/null | wc -l; }

cat >"$tmp/two.jsonl" <<'EOF'
# two small problems, two kernels
{"name": "t_dense", "kind": "dense", "m": 128, "n": 256, "k": 256}
{"name": "t_decode", "kind": "decode", "m": 64, "n": 512, "k": 128}
EOF
cat >"$tmp/bad.jsonl" <<'EOF'
{"name": "t_dense", "kind": "dense", "m": 128, "n": 256, "k": 256}
{"name": "oops", "kind": "dense", "m": 128, "n": -256, "k": 256}
{"name": "cut", "m": 128,
EOF
cat >"$tmp/unsupported.jsonl" <<'EOF'
{"name": "f4", "kind": "dense", "m": 128, "n": 256, "k": 256, "dtype": "nvfp4", "scale": "tensor"}
{"name": "gk", "kind": "grouped", "m": [64, 64], "n": [256, 512], "k": [256, 256], "g": 2}
EOF
# M-generic: hints of 1 to 8 rows plan one kernel (A in 8-row boxes)
cat >"$tmp/generic.jsonl" <<'EOF'
{"name": "decode_m1", "kind": "decode", "m": 1, "n": 4096, "k": 7168}
{"name": "decode_m4", "kind": "decode", "m": 4, "n": 4096, "k": 7168}
{"name": "decode_m8", "kind": "decode", "m": 8, "n": 4096, "k": 7168}
EOF

# ---- compile, then find cached --------------------------------------------
run --arch sm_90a --cache-dir "$cache" -j 2 "$tmp/two.jsonl"
expect_rc 0 "first warm"
expect "^compiled 2$" "first warm"
expect "^already cached 0$" "first warm"
expect "^failed 0$" "first warm"
expect "\[2/2\] compiled jg_gemm_bf16_bf16_sm90a_" "first warm (one plain line per kernel)"
[ "$(entries)" -eq 2 ] || fail "first warm: $(entries) entries on disk, expected 2"

run --arch sm_90a --cache-dir "$cache" "$tmp/two.jsonl"
expect_rc 0 "second warm"
expect "^compiled 0$" "second warm"
expect "^already cached 2$" "second warm"
expect "compiling 0.00 s" "second warm (no compile)"

echo "--- from stdin"
out=$("$warm" --arch sm_90a --cache-dir "$cache" <"$tmp/two.jsonl" 2>&1)
rc=$?
expect_rc 0 "stdin"
expect "^already cached 2$" "stdin"

# ---- lines that fail -----------------------------------------------------
run --arch sm_90a --cache-dir "$cache" "$tmp/bad.jsonl"
expect_rc 1 "malformed lines"
expect "bad.jsonl: line 2: field 'n'" "malformed lines"
expect "bad.jsonl: line 3, column" "malformed lines"
expect "^already cached 1$" "malformed lines (the good line is still warmed)"
expect "^failed 2$" "malformed lines"

run --arch sm_90a --cache-dir "$cache" "$tmp/unsupported.jsonl"
expect_rc 1 "unsupported lines"
expect "unsupported: nvfp4 takes scale block.*line 1" "unsupported lines"
expect "unsupported: groups with different n or k are not supported.*line 2" "unsupported lines"
run --arch sm_90a --cache-dir "$cache" --skip-unsupported "$tmp/unsupported.jsonl"
expect_rc 0 "--skip-unsupported"
expect "^skipped 2 " "--skip-unsupported"

# ---- dense nvfp4: kernels for the line's scale layout ---------------------
printf '%s\n' '{"name": "f4s", "kind": "dense", "m": 128, "n": 256, "k": 1056, "dtype": "nvfp4"}' \
    '{"name": "f4r", "kind": "decode", "m": 1, "n": 512, "k": 512, "dtype": "nvfp4", "sf": "row"}' \
    >"$tmp/nvfp4.jsonl"
run --arch sm_90a --cache-dir "$tmp/nvfp4-cache" "$tmp/nvfp4.jsonl"
expect_rc 0 "nvfp4 lines"
expect "^compiled 2$" "nvfp4 lines"
expect "jg_gemm_nvfp4_sfss_bf16_" "nvfp4 lines"
expect "jg_gemm_nvfp4_sfrr_bf16_" "nvfp4 lines"

# ---- 0.7 forms: fp32, MN-major, leading dimensions, unaligned (dry run) -----
printf '%s\n' '{"name": "t32", "m": 100, "n": 200, "k": 300, "dtype": "fp32"}' \
    '{"name": "x32", "m": 100, "n": 200, "k": 300, "dtype": "fp32-exact"}' \
    '{"name": "mn", "m": 100, "n": 256, "k": 300, "dtype": "fp16", "a_major": "m", "b_major": "n"}' \
    '{"name": "ld", "m": 101, "n": 201, "k": 301, "lda": 303, "ldb": 301, "ldd": 203}' \
    '{"name": "ua", "m": 100, "n": 256, "k": 320, "unaligned": true}' \
    '{"name": "gn", "m": [64, 32], "n": [256, 256], "k": [256, 256], "b_major": "n", "unaligned": true}' \
    '{"name": "gc", "kind": "grouped", "layout": "masked", "m": [3, 5], "n": [256, 256], "k": [256, 256], "b_major": "n"}' \
    >"$tmp/forms.jsonl"
run --arch sm_90a --cache-dir "$tmp/forms-cache" -n "$tmp/forms.jsonl"
expect_rc 1 "0.7 forms (one unsupported line)"
expect "jg_gemm_fp32_fp32_sm90a_.*line 1" "0.7 forms: TF32"
expect "jg_gemm_fp32x3_fp32_sm90a_.*line 2" "0.7 forms: exact FP32"
expect "jg_gemm_fp16_fp16_sm90a_.*_am_bn_.*line 3" "0.7 forms: MN-major"
expect "jg_gemm_bf16_bf16_sm90a_.*_sabd_.*line 4" "0.7 forms: unaligned rows"
expect "jg_gemm_bf16_bf16_sm90a_.*_sabd_.*line 5" "0.7 forms: unaligned pointers"
expect "jg_glist2_bf16_bf16_sm90a_.*_bn_sabd_.*line 6" "0.7 forms: grouped"
expect "unsupported: N-major B takes the list layout only.*line 7" "0.7 forms: masked N-major"

# ---- dense fp8: e4m3 kernels with the line's scale mode ---------------------
printf '%s\n' '{"name": "f8", "kind": "dense", "m": 128, "n": 256, "k": 256, "dtype": "fp8"}' \
    '{"name": "f8b", "kind": "dense", "m": 128, "n": 256, "k": 256, "dtype": "fp8", "scale": "block"}' \
    '{"name": "g8", "kind": "grouped", "layout": "masked", "m": [3, 5], "n": [256, 256], "k": [256, 256], "g": 2, "m_max": 8, "dtype": "fp8", "scale": "row"}' \
    '{"name": "l8", "kind": "grouped", "m": [64, 64], "n": [256, 256], "k": [256, 256], "g": 2, "dtype": "fp8"}' \
    >"$tmp/fp8.jsonl"
run --arch sm_90a --cache-dir "$tmp/fp8-cache" "$tmp/fp8.jsonl"
expect_rc 0 "fp8 lines"
expect "^compiled 4$" "fp8 lines"
expect "jg_glist2_e4m3_tensor_bf16_" "fp8 lines"
expect "jg_gemm_e4m3_tensor_bf16_" "fp8 lines"
expect "jg_gmasked2_e4m3_row_bf16_" "fp8 lines"
expect "jg_gemm_e4m3_block_bf16_" "fp8 lines"

# ---- a grouped line in the seeds' format: one kernel for its rows ----------
printf '%s\n' '{"m": [80, 0, 176], "n": [512, 512, 512], "k": [256, 256, 256], "g": 3, "seed": 1111}' \
    >"$tmp/grouped.jsonl"
run --arch sm_90a --cache-dir "$tmp/grouped-cache" "$tmp/grouped.jsonl"
expect_rc 0 "grouped line"
expect "^compiled 1$" "grouped line"
expect "jg_glist3_" "grouped line"
run --arch sm_90a --cache-dir "$tmp/grouped-cache" "$tmp/grouped.jsonl"
expect_rc 0 "grouped line again"
expect "^already cached 1$" "grouped line again"
printf '%s\n' '{"name": "masked", "kind": "grouped", "layout": "masked", "m": [3, 5], "n": [256, 256], "k": [256, 256], "g": 2, "m_max": 8}' \
    '{"name": "masked2", "kind": "grouped", "layout": "masked", "m": [7, 1], "n": [256, 256], "k": [256, 256], "g": 2, "m_max": 8}' \
    >"$tmp/masked.jsonl"
run --arch sm_90a --cache-dir "$tmp/grouped-cache" "$tmp/masked.jsonl"
expect_rc 0 "masked lines"
expect "^compiled 1$" "masked lines: one kernel serves both"
expect "jg_gmasked2_" "masked lines"

# ---- counting kernels without compiling ------------------------------------
run --arch sm_90a --cache-dir "$cache" -n "$tmp/generic.jsonl"
expect_rc 0 "dry run"
expect "^jitgemm-warm: 3 distinct kernels" "dry run (M baked in: one kernel per M)"
run --arch sm_90a --cache-dir "$cache" -n --m-generic "$tmp/generic.jsonl"
expect_rc 0 "dry run, M-generic"
expect "^jitgemm-warm: 1 distinct kernel " "dry run, M-generic (one kernel serves the three M)"
expect "^missing .*_mX8n4096k7168 .*and 2 more lines" "dry run, M-generic"
run --arch sm_90a --cache-dir "$cache" -n --m-generic --pdl "$tmp/generic.jsonl"
expect_rc 0 "dry run, M-generic, PDL"
expect "^missing .*_mX8n4096k7168_pdl " "dry run, --pdl (a programmatic dependent: its own kernel)"
run --list --pdl --cache-dir "$cache"
expect_rc 2 "--list with --pdl"
run --arch sm_90a --cache-dir "$cache" -n "$tmp/two.jsonl"
expect "^2 kernels: 2 cached, 0 to compile" "dry run of cached kernels"
[ "$(entries)" -eq 2 ] || fail "dry runs compiled something: $(entries) entries"

# ---- --backend: the same kernel, an entry per backend ----------------------
bcache=$tmp/backend-cache
printf '%s\n' '{"name": "decode_m1", "kind": "decode", "m": 1, "n": 4096, "k": 7168}' \
    >"$tmp/backend.jsonl"
run --arch sm_90a --cache-dir "$bcache" --backend nvrtc "$tmp/backend.jsonl"
expect_rc 0 "--backend nvrtc"
expect "^compiled 1$" "--backend nvrtc"
run --arch sm_90a --cache-dir "$bcache" --backend llvm "$tmp/backend.jsonl"
if [ "$rc" -eq 2 ]; then
    expect "built without LLVM" "--backend llvm in a build without it"
else
    expect_rc 0 "--backend llvm"
    expect "^compiled 1$" "--backend llvm (NVRTC's entry is not its)"
    n=$(ls "$bcache"/sm_90a/*.cubin | wc -l)
    [ "$n" -eq 2 ] || fail "--backend nvrtc, then llvm: $n entries, expected 2"
    export JITGEMM_BACKEND=llvm # the default backend when --backend is not given
    run --arch sm_90a --cache-dir "$bcache" "$tmp/backend.jsonl"
    unset JITGEMM_BACKEND
    expect_rc 0 "JITGEMM_BACKEND=llvm"
    expect "^already cached 1$" "JITGEMM_BACKEND=llvm (the entry --backend llvm wrote)"
fi
run --arch sm_90a --cache-dir "$bcache" --backend nvrtc "$tmp/backend.jsonl"
expect "^already cached 1$" "--backend nvrtc again"
run --arch sm_90a --cache-dir "$bcache" --backend cuda "$tmp/backend.jsonl"
expect_rc 2 "--backend cuda"
expect "backend must be nvrtc or llvm" "--backend cuda"

# ---- list, verify, damage, prune ------------------------------------------
run --list --cache-dir "$cache"
expect_rc 0 "--list"
expect "^jg_gemm_bf16_bf16_sm90a_.*_m128n256k256  *sm_90a .*KiB" "--list"
expect "^jg_gemm_bf16_bf16_sm90a_.*_m64n512k128  *sm_90a .*KiB" "--list"
expect "^2 entries (0 bad)" "--list"
run --verify --cache-dir "$cache"
expect_rc 0 "--verify of a sound cache"

victim=$(ls "$cache"/sm_90a/*.cubin | head -n 1)
python3 - "$victim" <<'EOF'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[-1] ^= 0x01  # one bit of the cubin: only the payload checksum sees it
open(path, "wb").write(data)
EOF
hex=0123456789abcdef0123456789abcdef
touch -d '2 minutes ago' "$cache/sm_90a/$hex.cubin.tmp.AbC123" # a killed writer's
touch "$cache/sm_90a/$hex.cubin.tmp.XyZ789"                    # a write in progress
touch "$cache/sm_90a/fedcba9876543210fedcba9876543210.lock"    # a lock, no entry
touch "$cache/sm_90a/notes.txt"                                # not the library's

run --list --cache-dir "$cache"
expect "CORRUPT (payload checksum mismatch)" "--list of a damaged entry"
run --verify --cache-dir "$cache"
expect_rc 1 "--verify of a damaged entry"
expect "BAD .*$(basename "$victim")" "--verify of a damaged entry"
run --prune --cache-dir "$cache"
expect_rc 0 "--prune"
expect "removed sm_90a/$(basename "$victim"): CORRUPT" "--prune"
expect "removed sm_90a/$hex.cubin.tmp.AbC123" "--prune"
expect "removed sm_90a/fedcba9876543210fedcba9876543210.lock" "--prune"
[ ! -e "$victim" ] || fail "--prune left the damaged entry"
[ -e "$cache/sm_90a/$hex.cubin.tmp.XyZ789" ] || fail "--prune removed a fresh temp file"
[ -e "$cache/sm_90a/notes.txt" ] || fail "--prune removed a file that is not the library's"
[ "$(entries)" -eq 1 ] || fail "--prune: $(entries) entries left, expected 1"
run --verify --cache-dir "$cache"
expect_rc 0 "--verify after --prune"
expect "1 ok, 0 bad" "--verify after --prune"

run --arch sm_90a --cache-dir "$cache" "$tmp/two.jsonl"
expect_rc 0 "warm after --prune"
expect "^compiled 1$" "warm after --prune (the removed kernel again)"
expect "^already cached 1$" "warm after --prune"

# ---- pruning by age and by size ---------------------------------------------
old=$(ls "$cache"/sm_90a/*.cubin | head -n 1)
touch -a -d '40 days ago' "$old" # its last load, as the file system records it
run --verify --cache-dir "$cache" # reads every entry, which is not a use
expect_rc 0 "--verify before --prune --max-age"
run --prune --max-age 30d --cache-dir "$cache"
expect_rc 0 "--prune --max-age"
expect "removed sm_90a/$(basename "$old"): not used within the age limit" "--prune --max-age"
[ "$(entries)" -eq 1 ] || fail "--prune --max-age: $(entries) entries left, expected 1"
run --prune --max-age 30d --cache-dir "$cache"
expect "^pruned 0 files" "--prune --max-age of a cache in use"
run --prune --max-size 1K --cache-dir "$cache"
expect_rc 0 "--prune --max-size"
expect "least recently used, over the size limit" "--prune --max-size"
[ "$(entries)" -eq 0 ] || fail "--prune --max-size 1K: $(entries) entries left, expected 0"
for bad in "--max-age 0" "--max-age 3w" "--max-size 2T" "--max-size -5"; do
    run --prune $bad --cache-dir "$cache"
    expect_rc 2 "--prune $bad"
done
run --list --max-size 1G --cache-dir "$cache"
expect_rc 2 "--list with --max-size"

# ---- setups that cannot work ------------------------------------------------
mkdir "$tmp/open" && chmod 777 "$tmp/open"
run --arch sm_90a --cache-dir "$tmp/open" "$tmp/two.jsonl"
[ "$rc" -ne 0 ] || fail "a group-writable cache directory: exit status 0"
expect "writable by group or others" "a group-writable cache directory"

run --list --cache-dir "$tmp/open"
expect_rc 2 "--list of a group-writable directory"
expect "writable by group or others" "--list of a group-writable directory"

run --cache-dir "$cache" "$tmp/two.jsonl" # no --arch: the local GPU, if any
if [ "$rc" -eq 2 ]; then
    expect "no GPU: use --arch sm_90a" "no GPU"
elif [ "$rc" -ne 0 ]; then
    fail "without --arch: exit status $rc"
fi

run --list "$tmp/two.jsonl"
expect_rc 2 "--list with a spec file"
run -j 0 "$tmp/two.jsonl"
expect_rc 2 "-j 0"
run --bogus
expect_rc 2 "an unknown option"
out=$("$warm" --help 2>&1)
rc=$?
expect_rc 0 "--help"
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "SPEC FORMAT" ENVIRONMENT "EXIT STATUS" \
    EXAMPLES JITGEMM_CACHE_DIR; do
    expect "$section" "--help"
done

if [ "$failures" -ne 0 ]; then
    echo "test_warm: $failures check(s) failed" >&2
    exit 1
fi
echo "test_warm: all checks passed"
