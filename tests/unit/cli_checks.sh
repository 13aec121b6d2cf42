# Shared by the tools' end-to-end shell tests (test_warm.sh,
# test_bench_cli.sh), sourced after they set `tool` (the executable's path)
# and `tool_name` (for the transcript). Counts failures in $failures.
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
# Runs the tool; its output (both streams) in $out, its status in $rc.
run() {
    echo "\$ $tool_name $*"
    out=$("$tool" "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/    /'
}
expect() { printf '%s\n' "$out" | grep -q -- "$1" || fail "$2: the output lacks '$1'"; }
expect_not() { ! printf '%s\n' "$out" | grep -q -- "$1" || fail "$2: the output has '$1'"; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "$2: exit status $rc, expected $1"; }
