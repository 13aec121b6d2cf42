#!/bin/sh
# One device run for the Python package (issue 29), on a GPU host with PyTorch:
# build, the package's tests (tests/python, GPU ones included) from the
# checkout (python/ + build/libjitgemm.so), pip install . into a scratch
# directory and its tests against that copy, the MoE example, and the host
# overhead against the C API. Wheels the host lacks (pytest, meson-python and
# theirs) may come in .whl/ (pip download on a machine with PyPI; the host
# needs no network). Logs to $OUT.
#   sh bench/run-python.sh
set -u
OUT=${OUT:-bench/tmp}
mkdir -p "$OUT"
for f in .devdeps/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --find-links .whl --break-system-packages \
        pytest meson-python 2>/dev/null ||
        python3 -m pip install -q --no-index --find-links .whl pytest meson-python
fi
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
{ meson setup build -Dbuildtype=release --reconfigure 2>/dev/null || meson setup build -Dbuildtype=release; } \
    > "$OUT/build.log" 2>&1 && ninja -C build >> "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
export JITGEMM_CACHE_DIR=$(mktemp -d)
JITGEMM_LIBRARY="$PWD/build/libjitgemm.so" PYTHONPATH="$PWD/python" \
    python3 -m pytest tests/python -rs -p no:cacheprovider > "$OUT/pytest.log" 2>&1
echo "pytest (checkout) rc=$?"; tail -3 "$OUT/pytest.log"
site=$(mktemp -d) repo=$PWD
if python3 -m pip install -q --no-build-isolation --no-deps --target "$site" . > "$OUT/pip.log" 2>&1; then
    (cd "$site" && JITGEMM_TEST_INSTALLED=1 PYTHONPATH="$site" \
        python3 -m pytest "$repo/tests/python/test_gpu.py" -q -p no:cacheprovider \
        > "$OUT/pytest-installed.log" 2>&1)
    echo "pytest (pip install) rc=$?"; tail -1 "$OUT/pytest-installed.log"
else
    echo "pip install . failed (meson-python missing?): $(tail -1 "$OUT/pip.log")"
fi
export JITGEMM_LIBRARY="$PWD/build/libjitgemm.so" PYTHONPATH="$PWD/python"
python3 examples/python/moe_layer.py 2>&1 | tee "$OUT/moe.log"
python3 bench/python_overhead.py 2>&1 | tee "$OUT/python_overhead.log"
