#!/bin/sh
# The library must load where no GPU driver is installed: it may not link
# libcuda (opened with dlopen) nor cuBLAS (tools only).
set -eu
lib=$1
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
echo "deps: ok ($(echo "$exported" | wc -l) exported symbols, all jg_*)"
