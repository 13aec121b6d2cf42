#!/bin/sh
# Packs an LLVM-enabled build for a GPU host that has no LLVM 19: the GPU
# suite's test programs, test_backends, jitgemm-latency, jitgemm-bench, the
# shared library, and every shared library they load that is neither glibc nor
# CUDA's (libLLVM.so.19.1 and its own: libz3, libicu*, libxml2, ...), in one
# xz archive that scripts/device-llvm.sh unpacks and runs there.
#
#   meson setup B -Dbuildtype=release -Dllvm=enabled && ninja -C B
#   sh scripts/pack-llvm-carry.sh B OUT_DIR     # writes OUT_DIR/llvm-carry.tar.xz
#
# The programs find libjitgemm.so through their run path ($ORIGIN/..) and the
# rest through LD_LIBRARY_PATH, so the archive runs from any directory. They
# read nothing of the build directory; the spec files come from the source
# tree the device runs in, which must be the build's (COMMIT in the archive).
# libstdc++ and libgcc_s go in compat/, which the device script puts on the
# path only where the host's own lack a version these programs need.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$2
readelf -d "$build/libjitgemm.so" | grep -q 'libLLVM' ||
    { echo "$build: libjitgemm.so does not link LLVM (configure with -Dllvm=enabled)" >&2; exit 1; }
python3 - "$build" <<'EOF' || { echo "$build is not a release build" >&2; exit 1; }
import json, sys
opts = json.load(open(sys.argv[1] + "/meson-info/intro-buildoptions.json"))
sys.exit(0 if any(o["name"] == "buildtype" and o["value"] == "release" for o in opts) else 1)
EOF

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build-llvm/tests" "$stage/build-llvm/tools" "$stage/lib" "$stage/compat"

# The GPU suite as meson would run it, with paths relative to the build
# directory (the program) and to the source tree (its arguments):
# name, timeout, environment, program, arguments; tab-separated.
python3 - "$build" > "$stage/gpu-tests.tsv" <<'EOF'
import json, os, sys
build = sys.argv[1]
src = json.load(open(build + "/meson-info/meson-info.json"))["directories"]["source"]
for t in json.load(open(build + "/meson-info/intro-tests.json")):
    if not any(s.split(":")[-1] == "gpu" for s in t["suite"]):
        continue
    exe = os.path.relpath(t["cmd"][0], build)
    args = [os.path.relpath(os.path.normpath(a), src) if a.startswith("/") else a
            for a in t["cmd"][1:]]
    env = ",".join(f"{k}={v}" for k, v in sorted(t["env"].items()) if k != "LD_LIBRARY_PATH")
    print("\t".join([t["name"], str(t["timeout"]), env or "-", exe, " ".join(args)]))
EOF
[ -s "$stage/gpu-tests.tsv" ] || { echo "no gpu tests in $build" >&2; exit 1; }

cut -f4 "$stage/gpu-tests.tsv" | while read -r exe; do
    cp "$build/$exe" "$stage/build-llvm/$exe"
done
cp "$build/tools/jitgemm-latency" "$build/tools/jitgemm-bench" "$stage/build-llvm/tools/"
for f in "$build"/libjitgemm.so*; do [ -d "$f" ] || cp -P "$f" "$stage/build-llvm/"; done

# Every library the programs load, by its soname, less glibc's and CUDA's
# (the host's own: its driver and toolkit).
find "$stage/build-llvm" -type f | while read -r f; do ldd "$f"; done |
    awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
    while read -r name path; do
        case $name in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|\
        libutil.so.*|ld-linux*|libjitgemm.so*) ;;
        libcuda.so.*|libcudart.so.*|libnvrtc*|libnvJitLink*) ;;
        libstdc++.so.*|libgcc_s.so.*) cp -L "$path" "$stage/compat/$name" ;;
        *) cp -L "$path" "$stage/lib/$name" ;;
        esac
    done
[ -f "$stage/lib/libLLVM.so.19.1" ] || { echo "libLLVM.so.19.1 not found by ldd" >&2; exit 1; }

# glibc added arc4random in 2.36; Debian 12's libLLVM and libstdc++ call it
# (random seeds), and so need GLIBC_2.36, though nothing else of them does.
# That need is made weak (elf_weak_version.py), and compat/ gets arc4random
# at that version, which the device script preloads where glibc is older.
here=$(dirname "$0")/llvm-carry
for f in "$stage/lib/libLLVM.so.19.1" "$stage/compat/libstdc++.so.6"; do
    [ -f "$f" ] && python3 "$here/elf_weak_version.py" "$f" GLIBC_2.36
done
${CC:-cc} -O2 -shared -fPIC -Wl,--version-script="$here/arc4random.map" \
    -o "$stage/compat/libjg_arc4random.so" "$here/arc4random.c"

commit=${JITGEMM_COMMIT:-$(git -C "$build/.." rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "$commit" > "$stage/COMMIT"
# The newest glibc version a packed program or library needs (arc4random aside).
for f in "$stage"/lib/* "$stage"/compat/* "$stage"/build-llvm/libjitgemm.so.*.*.* \
         "$stage"/build-llvm/t*/*; do
    objdump -T "$f" | awk '/\*UND\*/ && $NF != "arc4random"' | grep -o 'GLIBC_2\.[0-9.]*'
done | sort -Vu | tail -1 > "$stage/GLIBC_NEEDED"
glibc_needed=$(cat "$stage/GLIBC_NEEDED")

mkdir -p "$out"
tar -C "$stage" -cf - . | xz -9e -T2 > "$out/llvm-carry.tar.xz"
ls -l "$out/llvm-carry.tar.xz"
echo "commit $commit, needs $glibc_needed; $(wc -l < "$stage/gpu-tests.tsv") gpu tests;" \
     "libraries: $(cd "$stage" && echo lib/* compat/*)"
