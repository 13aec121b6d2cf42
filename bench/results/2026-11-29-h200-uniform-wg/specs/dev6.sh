set -u
for f in .devdeps/*.deb; do dpkg -x $f /; done
mkdir -p /tmp/wg && tar --exclude=./build --exclude=./bench/tmp --exclude=./.git -cf - . | tar -xf - -C /tmp/wg
(cd /tmp/wg && patch -p1 < bench/patches/uniform-wg.patch) > $OUT/patch.log 2>&1 || { cat $OUT/patch.log; exit 1; }
(meson setup build -Dbuildtype=release && ninja -C build) > $OUT/build.log 2>&1 &
(cd /tmp/wg && meson setup build -Dbuildtype=release && ninja -C build) > $OUT/build-wg.log 2>&1 &
wait
tail -2 $OUT/build.log $OUT/build-wg.log
cd /tmp/wg && timeout 150 build/tests/test_gemm_fuzz --count 300 > $OUT/fuzz-wg.log 2>&1; echo "gemm_fuzz wg rc=$?"; tail -2 $OUT/fuzz-wg.log
timeout 100 build/tests/test_any_fuzz --count 100 > $OUT/anyfuzz-wg.log 2>&1; echo "any_fuzz wg rc=$?"; tail -2 $OUT/anyfuzz-wg.log
cd - > /dev/null
timeout 300 python3 bench/env_sweep.py --spec $PWD/bench/tmp/cls30.jsonl --rounds 2 --peer --out $OUT/sw-cls30 --variant base= --variant wg=BENCH=/tmp/wg/build/tools/jitgemm-bench -- --energy > $OUT/sweep-cls30.txt 2>&1
tail -8 $OUT/sweep-cls30.txt
timeout 240 python3 bench/env_sweep.py --spec $PWD/bench/tmp/rnd40.jsonl --rounds 1 --peer --out $OUT/sw-rnd40 --variant base= --variant wg=BENCH=/tmp/wg/build/tools/jitgemm-bench -- --energy > $OUT/sweep-rnd40.txt 2>&1
tail -8 $OUT/sweep-rnd40.txt
sh bench/pack-out.sh $OUT
