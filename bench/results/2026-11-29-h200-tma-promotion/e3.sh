set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# 1. clusters and tiles on FP8 rows off sectors, with 128-byte promotion
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/tmp/off-fp8.jsonl --rounds 2 --out $OUT/off-cl --variant base= --variant c2=JITGEMM_CLUSTER=2 --variant c1=JITGEMM_CLUSTER=1 --variant t144=JITGEMM_TILE=128x144 -- --reps 50 > $OUT/off-cl.log 2>&1; echo "off-cl rc=$? at $(el)s"; tail -6 $OUT/off-cl.log
# 2. the gpu suite's tests of the operand maps that change (FP8, NVFP4) and the package
meson test -C build --suite gpu --num-processes 1 nvfp4 grouped_nvfp4 > $OUT/gpu-suite.log 2>&1; echo "gpu suite (nvfp4) rc=$? at $(el)s"
grep -E "^ *[0-9]+/[0-9]+ " $OUT/gpu-suite.log; cp build/meson-logs/testlog.txt $OUT/testlog-nvfp4.txt
JITGEMM_CACHE=off timeout 200 build/tests/test_any_fuzz --count 300 > $OUT/any_fuzz.log 2>&1; echo "any_fuzz 300 rc=$? at $(el)s"; head -2 $OUT/any_fuzz.log | cut -c1-200; tail -3 $OUT/any_fuzz.log | cut -c1-200
export JITGEMM_CACHE_DIR=$(mktemp -d)
JITGEMM_LIBRARY="$PWD/build/libjitgemm.so" PYTHONPATH="$PWD/python" timeout 200 python3 -m pytest tests/python -rs -p no:cacheprovider > $OUT/pytest.log 2>&1; echo "pytest rc=$? at $(el)s"; tail -3 $OUT/pytest.log
echo "at $(el)s"
sh bench/pack-out.sh $OUT
