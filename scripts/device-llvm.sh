#!/bin/sh
# The LLVM backend's GPU run (docs/llvm-backend.md, "On the device") on a GPU
# host without LLVM 19: runs the programs of an LLVM-enabled release build
# that scripts/pack-llvm-carry.sh packed, with the libraries packed beside them.
# From the repository root of the build's commit (the spec files are read
# from it), with the archive at .llvmcarry/llvm-carry.tar.xz:
#
#   sh scripts/device-llvm.sh [latency] [backends] [bench] [suite]
#
# Steps (all four by default, in this order):
#   latency   CUDA_CACHE_DISABLE=1 jitgemm-latency --backend both --compiles 9
#   backends  test_backends --seed 1 bench/shapes.jsonl (LLVM against NVRTC)
#   bench     jitgemm-bench on bench/shapes.jsonl, JITGEMM_BACKEND=nvrtc then llvm
#   suite     the gpu suite's programs, JITGEMM_BACKEND=llvm (test_backends is
#             the backends step), run directly: meson cannot run a build
#             directory made elsewhere by another meson
# Each step has its own time limit within JG_BUDGET seconds in all (default
# 540); a step that fails or runs out does not stop the next. Logs go to
# $OUT (default bench/tmp/llvm): summary.txt, and llvm-run.tgz with every log
# and both benchmark JSON files, both rewritten after each step.
set -u
OUT=${OUT:-bench/tmp/llvm}
carry=${JG_CARRY:-.llvmcarry}
budget=${JG_BUDGET:-540}
steps=${*:-latency backends bench suite}
start=$(date +%s)
mkdir -p "$OUT"
logs=$(mktemp -d)
summary=$logs/summary.txt
x=$carry/x
b=$x/build-llvm

note() { echo "$*" | tee -a "$summary"; }
save() {
    cp "$summary" "$OUT/summary.txt"
    tar -czf "$OUT/llvm-run.tgz" -C "$logs" .
}
left() { echo $((budget - ($(date +%s) - start))); }
# run NAME CAP COMMAND...: COMMAND under `timeout` (CAP, or what is left of
# the budget), its output in NAME.log, one summary line.
run_step() {
    step_name=$1 step_cap=$2
    shift 2
    t=$(left)
    [ "$t" -gt "$step_cap" ] && t=$step_cap
    if [ "$t" -lt 15 ]; then
        note "$step_name: not run (budget spent)"
        return 0
    fi
    s0=$(date +%s)
    timeout -k 10 "$t" "$@" < /dev/null > "$logs/$step_name.log" 2>&1
    rc=$?
    case $rc in
    0) verdict=ok ;;
    77) verdict=skipped ;;
    124|137) verdict="TIMEOUT after ${t}s" ;;
    *) verdict="FAILED rc=$rc" ;;
    esac
    note "$step_name: $verdict ($(($(date +%s) - s0)) s)"
    save
    return 0
}

# ---- the archive and the libraries ------------------------------------------
if [ ! -x "$b/tools/jitgemm-bench" ]; then
    mkdir -p "$x"
    tar -xJf "$carry/llvm-carry.tar.xz" -C "$x" 2>/dev/null ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$carry/llvm-carry.tar.xz" "$x" ||
        { echo "cannot unpack $carry/llvm-carry.tar.xz" >&2; exit 1; }
fi
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done # not needed: the archive has them
cuda_bin=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
cuda_libs=$cuda_bin/../lib64:/usr/local/cuda/lib64
export LD_LIBRARY_PATH="$PWD/$x/lib:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export JITGEMM_COMMIT="${JITGEMM_COMMIT:-$(cat "$x/COMMIT")}"
here=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
    echo "build commit $JITGEMM_COMMIT (this tree's git says $here: the device copy's may be stale)"
    ldd --version 2>&1 | head -1
    grep PRETTY_NAME /etc/os-release 2>/dev/null
    echo "the archive's programs need $(cat "$x/GLIBC_NEEDED")"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv 2>&1
} > "$logs/env.log"
# glibc before 2.36: arc4random from compat/ (pack-llvm-carry.sh says why).
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$glibc" ] && [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -1)" != 2.36 ]; then
    export LD_PRELOAD="$PWD/$x/compat/libjg_arc4random.so${LD_PRELOAD:+:$LD_PRELOAD}"
    echo "glibc $glibc: LD_PRELOAD=$LD_PRELOAD" >> "$logs/env.log"
fi
# The host's libstdc++ where it has every version the programs need, else
# the build host's (compat/).
missing() {
    ldd "$b/tools/jitgemm-latency" "$x/lib/libLLVM.so.19.1" 2>&1 | grep 'not found' |
        grep -v 'weak version'
}
if [ -n "$(missing)" ]; then
    export LD_LIBRARY_PATH="$PWD/$x/lib:$PWD/$x/compat:${LD_LIBRARY_PATH#*:}"
    echo "compat/ on the path for: $(missing | head -3)" >> "$logs/env.log"
fi
{ echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; ldd "$b/tools/jitgemm-latency"; } >> "$logs/env.log" 2>&1
cat "$logs/env.log"
if [ -n "$(missing)" ]; then
    note "the programs cannot load (see env.log):"
    missing | tee -a "$summary"
    save
    exit 1
fi
note "steps: $steps; budget ${budget}s"
save

# ---- the steps ----------------------------------------------------------------
cache_dir() { mktemp -d; }
for step in $steps; do
    case $step in
    latency)
        run_step latency 120 env CUDA_CACHE_DISABLE=1 JITGEMM_CACHE_DIR="$(cache_dir)" \
            "$b/tools/jitgemm-latency" --backend both --compiles 9
        grep -iE 'cold|median|llvm|nvrtc' "$logs/latency.log" | head -12 | tee -a "$summary"
        ;;
    backends)
        run_step backends 240 env JITGEMM_CACHE_DIR="$(cache_dir)" \
            "$b/tests/test_backends" --seed 1 bench/shapes.jsonl
        tail -5 "$logs/backends.log" | tee -a "$summary"
        ;;
    bench)
        for be in nvrtc llvm; do
            run_step "bench-$be" 150 env JITGEMM_BACKEND=$be JITGEMM_CACHE_DIR="$(cache_dir)" \
                "$b/tools/jitgemm-bench" --spec bench/shapes.jsonl --no-peer \
                --json "$logs/bench-$be.json"
        done
        python3 - "$logs/bench-nvrtc.json" "$logs/bench-llvm.json" <<'EOF' 2>&1 | tee -a "$summary"
import json, math, sys
try:
    nv, ll = ({r["name"]: r for r in json.load(open(p))["rows"]} for p in sys.argv[1:])
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"bench comparison: {e}")
ratios = []
for name, a in nv.items():
    c = ll.get(name)
    if c and a.get("ours_us") and c.get("ours_us"):
        ratios.append(c["ours_us"] / a["ours_us"])
        print(f"  {name:28s} nvrtc {a['ours_us']:9.2f} us  llvm {c['ours_us']:9.2f} us"
              f"  x{ratios[-1]:.3f}  ({c.get('origin')})")
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"bench: llvm/nvrtc time, geomean x{g:.4f} over {len(ratios)} rows;"
          f" worst x{max(ratios):.3f}; rows over 1.02: {sum(r > 1.02 for r in ratios)}")
EOF
        ;;
    suite)
        while IFS="$(printf '\t')" read -r name cap envs exe args; do
            [ "$name" = backends ] && continue
            case " ${JG_SKIP:-} " in *" $name "*) continue ;; esac # tests already run
            [ "$envs" = - ] && envs=
            # shellcheck disable=SC2046,SC2086 # the environment and arguments split on purpose
            run_step "suite-$name" "$cap" env JITGEMM_BACKEND=llvm JITGEMM_LOG=compile \
                $(echo "$envs" | tr ',' ' ') "$b/$exe" $args
            f=$logs/suite-$name.log
            [ -f "$f" ] && note "  kernels compiled: $(grep -c 'with LLVM in' "$f") by LLVM," \
                "$(grep -c 'with NVRTC in' "$f") by NVRTC ($(grep -c 'has no variant' "$f") not in the catalog)"
        done < "$x/gpu-tests.tsv"
        ;;
    *) note "unknown step $step" ;;
    esac
done
note "done in $(($(date +%s) - start)) s"
save
