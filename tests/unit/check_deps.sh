#!/bin/sh
# The library must load where no GPU driver is installed: it may not link
# libcuda (opened with dlopen) nor cuBLAS (tools only). It exports the jg_
# API and nothing else, and (given the public header) every function the
# header declares.
#   check_deps.sh libjitgemm.so [jitgemm.h]
set -eu
lib=$1
header=${2:-}
needed=$(readelf -d "$lib" | grep NEEDED || true)
echo "$needed"
if echo "$needed" | grep -E 'libcuda\.so|libcublas|libcudart'; then
    echo "FAIL: $lib links a CUDA driver, runtime or cuBLAS library" >&2
    exit 1
fi
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^LIBJITGEMM' || true)
bad=$(echo "$exported" | grep -v '^jg_[a-z]' || true)
if [ -n "$bad" ]; then
    echo "FAIL: symbols exported beyond the jg_ API: $bad" >&2
    exit 1
fi
missing=
if [ -n "$header" ]; then
    for f in $(grep -o 'JG_API[^(]*(' "$header" | grep -o 'jg_[a-z0-9_]*(' | tr -d '('); do
        echo "$exported" | sed "s/@.*//" | grep -qx "$f" || missing="$missing $f"
    done
fi
if [ -n "$missing" ]; then
    echo "FAIL: declared in $header but not exported:$missing" >&2
    exit 1
fi
echo "deps: ok ($(echo "$exported" | wc -l) exported symbols, all jg_*)"
